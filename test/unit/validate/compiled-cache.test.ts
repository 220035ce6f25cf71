// The compiled-schema cache (src/inputs/ajv-cache.ts): validators loaded from saved standalone code
// report exactly what freshly compiled ones report, and a damaged or unusable cache is a miss.
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import jsYaml from 'js-yaml';
import { AjvCache, cacheableAjv } from '../../../src/inputs/ajv-cache.ts';
import { CORE_INPUT_SCHEMAS } from '../../../src/inputs/core-schemas.ts';
import { CROWNLABS_CRD_PREFIX, loadCrdVersions } from '../../../src/inputs/crd-schemas.ts';
import { SchemaValidator } from '../../../src/inputs/schema-validator.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { isPlainJson, RenderedObjectValidator } from '../../../src/validate/validator.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
let objects: KubeObject[];
const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ajv-cache-'));
  dirs.push(d);
  return d;
};

beforeAll(() => {
  const { config } = loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml'), env: {}, flags: {} });
  const { inventory } = loadInventory([join(ROOT, 'examples', 'lab')]);
  objects = renderAll(compose(inventory, config)).flatMap((s) => s.objects);
});
afterEach(() => {
  for (const d of dirs.splice(0)) {
    chmodSync(d, 0o755);
    rmSync(d, { recursive: true, force: true });
  }
});

const copy = (o: unknown): any => JSON.parse(JSON.stringify(o));
const first = (kind: string) => copy(objects.find((o) => o.kind === kind));

/** Every rendered object of the example lab, each also broken in ways that reach every kind of check. */
function cases(): unknown[] {
  const out: unknown[] = [];
  for (const o of objects) {
    out.push(o);
    const bad = copy(o);
    bad.metadata.labels = { ...bad.metadata.labels, 'bad key!': 'x' };
    bad.unknownField = 1;
    if (bad.spec) bad.spec.alsoUnknown = { a: 1 };
    out.push(bad);
  }
  const d = first('Deployment');
  const c = d.spec.template.spec.containers[0];
  c.imagePullPolicy = 'Sometimes';
  c.name = 'Web_Sockify';
  c.ports = [{ containerPort: 0 }, { containerPort: 'x' }];
  c.resources = { limits: { cpu: '2X' }, requests: { memory: '-1' } };
  d.spec.replicas = 'one';
  d.spec.template.spec.containers.push({ ...copy(c), image: undefined });
  out.push(d);
  const vmi = first('VirtualMachineInstance');
  vmi.spec.domain.resources = { requests: { memory: '1k', cpu: '3' }, limits: { cpu: '2' } };
  vmi.spec.domain.devices.disks.push({ name: 'nowhere', disk: { bus: 7 } });
  out.push(vmi);
  const s = first('Secret');
  s.data = { '..bad': 'not base64!' };
  out.push(s, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'Bad_Name', namespace: 'n' }, spec: { ports: [] } }, { kind: 'Widget' }, 'text');
  return out;
}

describe('the compiled-schema cache', () => {
  it('a validator loaded from the cache reports exactly what a compiled one reports', () => {
    const dir = tempDir();
    const compiled = new RenderedObjectValidator({ cacheDir: false });
    const writer = new RenderedObjectValidator({ cacheDir: dir });
    const reader = new RenderedObjectValidator({ cacheDir: dir });
    const all = cases();
    const expected = all.map((o) => compiled.validate(o));
    expect(expected.flat().length).toBeGreaterThan(100);
    expect(all.map((o) => writer.validate(o))).toEqual(expected);
    expect(writer.timings.every((t) => !t.cached)).toBe(true);
    expect(readdirSync(dir).filter((f) => f.endsWith('.js'))).toHaveLength(writer.timings.length);
    expect(all.map((o) => reader.validate(o))).toEqual(expected);
    expect(reader.timings.length).toBe(writer.timings.length);
    expect(reader.timings.every((t) => t.cached)).toBe(true);
  });

  it('a truncated or tampered file is a miss, compiled and written again', () => {
    const dir = tempDir();
    const svc = first('Service');
    svc.spec.ports[0].port = 70000;
    const expected = new RenderedObjectValidator({ cacheDir: false }).validate(svc);
    expect(expected).toHaveLength(1);
    new RenderedObjectValidator({ cacheDir: dir }).validate(svc);
    const [file] = readdirSync(dir);
    const text = readFileSync(join(dir, file), 'utf8');
    expect(text).toContain('"additionalProperties"');
    for (const damaged of [text.slice(0, text.length / 2), text.replace('"additionalProperties"', '"additionalPropertiez"'), '', 'module.exports = () => true;']) {
      writeFileSync(join(dir, file), damaged);
      const v = new RenderedObjectValidator({ cacheDir: dir });
      expect(v.validate(svc)).toEqual(expected);
      expect(v.timings[0].cached).toBe(false);
      expect(readFileSync(join(dir, file), 'utf8')).toBe(text);
    }
  });

  it('a folder that cannot be written, or CROWNLABS_SCHEMA_CACHE=0: compiled every time, same result', () => {
    const dir = tempDir();
    chmodSync(dir, 0o555);
    const ns = first('Namespace');
    ns.metadata.name = 'Not_A_Label';
    const expected = new RenderedObjectValidator({ cacheDir: false }).validate(ns);
    expect(expected).toHaveLength(1);
    const readOnly = new RenderedObjectValidator({ cacheDir: join(dir, 'sub') });
    expect(readOnly.validate(ns)).toEqual(expected);
    expect(readOnly.timings[0].cached).toBe(false);
    const other = tempDir();
    process.env.CROWNLABS_SCHEMA_CACHE = '0';
    try {
      expect(new RenderedObjectValidator({ cacheDir: other }).validate(ns)).toEqual(expected);
    } finally {
      delete process.env.CROWNLABS_SCHEMA_CACHE;
    }
    expect(readdirSync(other)).toEqual([]);
  });

  it('a file is named by the schema, the documents it refers to, the options and the keywords', () => {
    const dir = tempDir();
    const make = (opts: { allErrors: boolean }, keyword?: string) => {
      const ajv = cacheableAjv(opts, (a) => {
        if (keyword) a.addKeyword({ keyword, validate: () => true });
      });
      return { ajv, cache: new AjvCache(ajv, opts, dir) };
    };
    const schema = { type: 'object', properties: { a: { type: 'string', minLength: 2 } } };
    const files = () => readdirSync(dir).filter((f) => f.endsWith('.js')).length;
    const run = (m: { ajv: Ajv; cache: AjvCache }, s: object, parts: string[] = []) => m.cache.compile(s, parts, () => m.ajv.compile(s));
    expect(run(make({ allErrors: true }), schema).cached).toBe(false);
    expect(run(make({ allErrors: true }), schema).cached).toBe(true);
    expect(files()).toBe(1);
    const other = run(make({ allErrors: true }), { ...schema, required: ['a'] });
    expect(other.cached).toBe(false);
    expect(other.validate({})).toBe(false);
    expect(run(make({ allErrors: true }), schema, ['a document']).cached).toBe(false);
    expect(run(make({ allErrors: false }), schema).cached).toBe(false);
    expect(run(make({ allErrors: true }, 'extra'), schema).cached).toBe(false);
    expect(files()).toBe(5);
    const loaded = run(make({ allErrors: true }), schema);
    expect(loaded.cached).toBe(true);
    expect(loaded.validate({ a: 'x' })).toBe(false);
    expect(loaded.validate({ a: 'xy' })).toBe(true);
  });
});

describe('the input schemas (CrownLabs CRDs, defaults applied) from the cache', () => {
  it('check and default exactly as compiled ones', () => {
    const docs = readdirSync(join(ROOT, 'examples', 'lab')).flatMap((f) => jsYaml.loadAll(readFileSync(join(ROOT, 'examples', 'lab', f), 'utf8')) as any[]);
    const broken = docs.map((d) => {
      const b = copy(d);
      b.spec.unknown = 1;
      b.metadata.bogus = true;
      for (const [k, v] of Object.entries(b.spec)) if (typeof v === 'string') b.spec[k] = 7;
      return b;
    });
    const inputs = [...docs, ...broken, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n', labels: { a: 'b' } } }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { a: '!!' } }];
    const crds = [...loadCrdVersions([CROWNLABS_CRD_PREFIX]), ...CORE_INPUT_SCHEMAS];
    const run = (v: SchemaValidator) =>
      inputs.map((d) => {
        const obj = copy(d);
        const crd = v.find(obj.apiVersion, obj.kind);
        if (!crd) throw new Error(`no CRD for ${obj.kind}`);
        return { issues: v.validate(crd, obj), defaulted: obj };
      });
    const expected = run(new SchemaValidator(crds, { cacheDir: false }));
    expect(expected.filter((e) => e.issues.length > 0)).toHaveLength(broken.length + 1);
    expect(expected.some((e, i) => JSON.stringify(e.defaulted) !== JSON.stringify(inputs[i]))).toBe(true);
    const dir = tempDir();
    expect(run(new SchemaValidator(crds, { cacheDir: dir }))).toEqual(expected);
    const files = readdirSync(dir).length;
    expect(files).toBeGreaterThanOrEqual(6);
    expect(run(new SchemaValidator(crds, { cacheDir: dir }))).toEqual(expected);
    expect(readdirSync(dir)).toHaveLength(files);
  });
});

describe('objects validated without a JSON copy', () => {
  it('only values that are their own JSON form', () => {
    expect(isPlainJson({ a: [1, 'x', true, null, { b: -1.5 }] })).toBe(true);
    expect(isPlainJson(Object.assign(Object.create(null), { a: 1 }))).toBe(true);
    for (const v of [{ a: undefined }, [undefined], [1, , 2], { a: NaN }, { a: Infinity }, { a: -0 }, { a: new Date(0) }, { toJSON: () => 1 }, { a: () => 1 }, { a: 1n }, new Map(), { a: Symbol('s') }]) {
      expect(isPlainJson(v), String(JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? 'bigint' : x)))).toBe(false);
    }
  });

  it('anything else is validated in its JSON form, as a sink writes it', () => {
    const v = new RenderedObjectValidator({ cacheDir: false });
    const svc = first('Service');
    svc.metadata.creationTimestamp = undefined;
    svc.spec.ports[0] = { ...svc.spec.ports[0], toJSON() { return { ...this, port: 0, toJSON: undefined }; } };
    expect(v.validate(svc)).toEqual([expect.objectContaining({ field: 'spec.ports[0].port' })]);
  });
});
