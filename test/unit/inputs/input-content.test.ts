import { isUtf8 } from 'node:buffer';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CORE_INPUT_SCHEMAS, OBJECT_META_SCHEMA } from '../../../src/inputs/core-schemas.ts';
import { firstInvalidUtf8 } from '../../../src/inputs/input-file.ts';
import { checkObject, parseInputText, readInputs, type SourcedObject } from '../../../src/inputs/parse.ts';
import type { Problem } from '../../../src/inputs/problems.ts';
import { escapeControl, formatProblem } from '../../../src/inputs/problems.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { crownlabs, ROOT } from '../../support/cli.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crownlabs-content-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const problemsOf = (text: string) => parseInputText(text, 'f.yaml').problems.map(formatProblem);

describe('#14.16 input files must be UTF-8', () => {
  const HEAD = 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  annotations: {x: "';
  const read = (bytes: Buffer) => {
    writeFileSync(join(dir, 'f.yaml'), bytes);
    return readInputs([dir], { cwd: dir });
  };

  it('rejects invalid UTF-8 naming the file, line and byte offset', () => {
    const { objects, problems } = read(Buffer.concat([Buffer.from(HEAD), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n')]));
    expect(objects).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([`f.yaml:5: error: invalid UTF-8 at byte offset ${HEAD.length} (byte 0xff)`]);
  });

  it('rejects overlong forms, surrogates, code points past U+10FFFF and a truncated sequence', () => {
    for (const bad of [[0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]]) {
      const { problems } = read(Buffer.concat([Buffer.from(HEAD), Buffer.from(bad)]));
      expect(problems.map((p) => p.message), bad.join(',')).toEqual([`invalid UTF-8 at byte offset ${HEAD.length} (byte 0x${bad[0].toString(16)})`]);
    }
  });

  it('reads valid multi-byte text', () => {
    const { objects, problems } = read(Buffer.from(`${HEAD}é€🙂"}\n`));
    expect(problems).toEqual([]);
    expect(objects[0].object.metadata.annotations).toEqual({ x: 'é€🙂' });
  });

  it('finds the first invalid byte exactly where Node stops calling the bytes UTF-8', () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 40 }),
      // Mostly valid text with a stray byte or a cut sequence.
      fc.tuple(fc.string({ unit: 'grapheme', maxLength: 20 }), fc.uint8Array({ maxLength: 3 }), fc.string({ maxLength: 5 })).map(([a, b, c]) => Uint8Array.from([...Buffer.from(a), ...b, ...Buffer.from(c)])),
    );
    fc.assert(
      fc.property(bytes, (b) => {
        const i = firstInvalidUtf8(b);
        if (i < 0) return isUtf8(b);
        // Valid up to i, and no well-formed sequence starts at i.
        return !isUtf8(b) && isUtf8(b.subarray(0, i)) && ![1, 2, 3, 4].some((n) => i + n <= b.length && isUtf8(b.subarray(i, i + n)));
      }),
      { numRuns: 2000 },
    );
  });

  it('rejects an invalid UTF-8 config file', () => {
    const file = join(dir, 'c.yaml');
    writeFileSync(file, Buffer.concat([Buffer.from('capCpu: "4"\nwebsiteBaseUrl: "'), Buffer.from([0xc3]), Buffer.from('"\n')]));
    expect(loadConfig({ file }).problems.map((p) => `${p.line}: ${p.message}`)).toEqual(['2: cannot read config: invalid UTF-8 at byte offset 29 (byte 0xc3)']);
  });
});

describe('#14.16 unknown fields in Namespace and Secret (and any metadata) are errors', () => {
  it('rejects unknown top-level fields of a Namespace and a Secret', () => {
    expect(problemsOf('apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\nspecc: {}\n')).toEqual(['f.yaml:4:8 (document 1, Namespace n): error: specc: unknown field']);
    expect(problemsOf('apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\nstringdata: {a: b}\n')).toEqual([
      'f.yaml:4:13 (document 1, Secret n/s): error: stringdata: unknown field',
    ]);
    expect(problemsOf('apiVersion: v1\nkind: Namespace\nmetadata: {name: n}\nspec: {finalizer: [kubernetes]}\n')).toEqual([
      'f.yaml:4:19 (document 1, Namespace n): error: spec.finalizer: unknown field',
    ]);
  });

  it('rejects a misspelt metadata field of every kind, and a Secret value that is not base64', () => {
    expect(problemsOf('apiVersion: v1\nkind: Namespace\nmetadata: {name: n, lables: {a: b}}\n')).toEqual(['f.yaml:3:29 (document 1, Namespace n): error: metadata.lables: unknown field']);
    expect(problemsOf('apiVersion: crownlabs.polito.it/v1alpha1\nkind: Workspace\nmetadata: {name: w, anotations: {a: b}}\nspec: {prettyName: W, quota: {cpu: 1, memory: 1G, instances: 1}}\n')).toEqual([
      'f.yaml:3:33 (document 1, Workspace w): error: metadata.anotations: unknown field',
    ]);
    expect(problemsOf('apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: n}\ndata: {a: "not base64"}\n')).toEqual(['f.yaml:4:11 (document 1, Secret n/s): error: data.a: must be base64']);
  });

  it('accepts Namespaces and Secrets as kubectl writes them', () => {
    const text = `apiVersion: v1
kind: Namespace
metadata:
  name: n
  creationTimestamp: null
  labels: {a: b}
  managedFields: [{manager: kubectl, operation: Apply, fieldsType: FieldsV1, fieldsV1: {f:metadata: {}}}]
  resourceVersion: "1"
  uid: 0a5f1c1e-0000-4000-8000-000000000000
spec: {finalizers: [kubernetes]}
status: {phase: Active}
---
apiVersion: v1
kind: Secret
metadata:
  name: mydrive-info
  namespace: n
  creationTimestamp: "2024-01-01T00:00:00Z"
  ownerReferences: [{apiVersion: v1, kind: Namespace, name: n, uid: x, controller: true}]
type: Opaque
immutable: false
data: {server-name: bmZz}
stringData: {path: /x}
`;
    const { objects, problems } = parseInputText(text, 'f.yaml');
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(2);
  });

  it('objects from the API server (not strict) may carry core and metadata fields newer than the vendored schemas', () => {
    const check = (obj: unknown, strict: boolean) => {
      const problems: Problem[] = [];
      const objects: SourcedObject[] = [];
      checkObject(structuredClone(obj), { file: 'cluster', document: 1, strict }, problems, objects);
      return problems.map((p) => `${p.field}: ${p.message}`);
    };
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', futureMeta: 1 }, status: { phase: 'Active', futureStatus: 'x' } };
    expect(check(ns, false)).toEqual([]);
    expect(check(ns, true)).toEqual(['metadata.futureMeta: unknown field', 'status.futureStatus: unknown field']);
    // A CrownLabs kind is checked against the CRD the server serves (it prunes the rest) as before.
    const ws = { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: 'w' }, spec: { prettyName: 'W', quota: { cpu: 1, memory: '1G', instances: 1 }, extra: 1 } };
    expect(check(ws, false)).toEqual(['spec.extra: unknown field']);
  });

  it('the hand-written schemas have exactly the fields of the vendored Kubernetes OpenAPI', () => {
    const doc = JSON.parse(readFileSync(join(ROOT, 'imports', 'k8s-openapi', 'api__v1_openapi.json'), 'utf8')) as { components: { schemas: Record<string, OpenApi> } };
    const component = (name: string) => doc.components.schemas[name];
    const ref = (s: OpenApi) => (s.$ref ?? s.allOf?.[0]?.$ref)?.split('/').pop();
    // Walks both schemas together, comparing field names wherever ours names them.
    const compare = (ours: OpenApi, theirs: OpenApi, path: string) => {
      const target = ref(theirs);
      if (target) theirs = component(target);
      if (ours.properties && Object.keys(ours.properties).length) {
        expect(Object.keys(ours.properties).sort(), path).toEqual(Object.keys(theirs.properties ?? {}).sort());
        for (const [name, sub] of Object.entries(ours.properties)) compare(sub, theirs.properties![name], `${path}.${name}`);
        expect(ours.required ?? [], path).toEqual(theirs.required ?? []);
      }
      if (ours.items && theirs.items) compare(ours.items, theirs.items, `${path}[]`);
      if (ours.type && theirs.type) expect(ours.type, path).toBe(theirs.type);
    };
    const [namespace, secret] = CORE_INPUT_SCHEMAS;
    compare(namespace.schema as OpenApi, component('io.k8s.api.core.v1.Namespace'), 'Namespace');
    compare(secret.schema as OpenApi, component('io.k8s.api.core.v1.Secret'), 'Secret');
    compare(OBJECT_META_SCHEMA as OpenApi, component('io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta'), 'ObjectMeta');
  });
});

interface OpenApi {
  type?: string;
  properties?: Record<string, OpenApi>;
  items?: OpenApi;
  required?: string[];
  $ref?: string;
  allOf?: { $ref?: string }[];
}

describe('#14.16 messages that echo input escape control characters', () => {
  it('escapes NUL, ESC, CR, newlines and bidirectional controls', () => {
    expect(escapeControl('a\u0000b\u001b[2Jc\rd\ne\u2028f\u202eg\u0085h é')).toBe('a\\x00b\\x1b[2Jc\\x0dd\\x0ae\\u2028f\\u202eg\\x85h é');
    expect(problemsOf('apiVersion: v1\nkind: Namespace\nmetadata: {name: "a\\0b\\e[31m"}\n')).toEqual([
      'f.yaml:3:18 (document 1, Namespace a\\x00b\\x1b[31m): error: metadata.name: "a\\x00b\\x1b[31m" is not a valid name (lower-case RFC 1123 subdomain)',
    ]);
  });

  it('escapes invisible characters: zero widths, BOM, soft hyphen, word joiner, tags, variation selectors, lone surrogates', () => {
    expect(escapeControl('a\u200bb\u200cc\u200dd\ufeffe\u00adf\u2060g\u{e0041}h\ufe0fi\ud800j\u3164k')).toBe(
      'a\\u200bb\\u200cc\\u200dd\\ufeffe\\xadf\\u2060g\\u{e0041}h\\ufe0fi\\ud800j\\u3164k',
    );
    // Visible text of any script, and emoji, stay as they are.
    expect(escapeControl('é 中 ا 😀 ß')).toBe('é 中 ا 😀 ß');
    // A name that looks like "tea" but is not: the message shows why.
    expect(problemsOf('apiVersion: v1\nkind: Namespace\nmetadata: {name: "te\\u200ba"}\n')).toEqual([
      'f.yaml:3:18 (document 1, Namespace te\\u200ba): error: metadata.name: "te\\u200ba" is not a valid name (lower-case RFC 1123 subdomain)',
    ]);
  });

  it('the CLI prints one escaped line per problem, even for a name or file with a newline', { timeout: 120_000 }, () => {
    const file = join(dir, 'evil\nfile.yaml');
    writeFileSync(file, 'apiVersion: v1\nkind: Namespace\nmetadata: {name: "x\\0\\n0 errors\\r"}\n');
    const r = crownlabs(['validate', '-f', file], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/[\u0000\r]/);
    expect(r.stderr.split('\n')).toEqual([
      `evil\\x0afile.yaml:3:18 (document 1, Namespace x\\x00\\x0a0 errors\\x0d): error: metadata.name: "x\\x00\\x0a0 errors\\x0d" is not a valid name (lower-case RFC 1123 subdomain)`,
      '1 error',
      '',
    ]);
  });
});

describe('namespaces of inputs (output paths are built from them)', () => {
  it('a namespace that is not a DNS label, such as "../../escape", is an input error naming the field', () => {
    const text = ['apiVersion: crownlabs.polito.it/v1alpha2', 'kind: Instance', 'metadata:', '  name: x', '  namespace: ../../escape', 'spec:', '  template.crownlabs.polito.it/TemplateRef: {name: t, namespace: workspace-w}', '  tenant.crownlabs.polito.it/TenantRef: {name: john}', ''].join('\n');
    const { objects, problems } = parseInputText(text, 'evil.yaml');
    expect(objects).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([expect.stringMatching(/^evil\.yaml:5:\d+ \(document 1, Instance \.\.\/\.\.\/escape\/x\): error: metadata\.namespace: "\.\.\/\.\.\/escape" is not a valid namespace/)]);
  });
});

describe('amounts of inputs', () => {
  it('a negative Tenant quota or Template memory is an input error naming the field', () => {
    const text = [
      'apiVersion: crownlabs.polito.it/v1alpha2',
      'kind: Tenant',
      'metadata: {name: john}',
      'spec: {firstName: J, lastName: D, email: j@example.com, quota: {cpu: "-4", memory: "-0", instances: 2}}',
      '',
    ].join('\n');
    const { objects, problems } = parseInputText(text, 't.yaml');
    expect(objects).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([expect.stringMatching(/^t\.yaml:4:\d+ \(document 1, Tenant john\): error: spec\.quota\.cpu: "-4": must be greater than or equal to 0$/)]);
  });
});
