import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { writeTreeAtomically } from '../../../src/sinks/atomic-tree.ts';
import { gitopsObject } from '../../../src/sinks/gitops.ts';
import { carryOverSealed, MAX_SEALED_FILE } from '../../../src/sinks/sealed-carry-over.ts';
import { objectToYaml } from '../../../src/sinks/yaml-emitter.ts';
import { testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const config = { ...testConfig(), gitopsSecretMode: 'sealed-secret' as const };
const REL = 'tenants/t/SealedSecret_tenant-t_s.yaml';
const SEALED_A = 'AgBy3i4OJSWK+PiTySYZZA9rO43cGDEq'.repeat(8);
const SEALED_B = 'AgCZ9ux7qeX1Nvo3ilWFe0e4fdk+Xw==';

/** The tree's SealedSecret for a Secret `tenant-t/s` with these keys. */
function rendered(keys: string[], type = 'Opaque', annotations: Record<string, string> = {}): string {
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', type, metadata: { name: 's', namespace: 'tenant-t', annotations }, data: Object.fromEntries(keys.map((k) => [k, 'eA=='])) } as KubeObject;
  return objectToYaml(gitopsObject(secret, config));
}

/** An output folder (marker included) holding `sealedFile` at REL. */
function folder(sealedFile: string | ((dir: string) => void)): string {
  const out = join(mkdtempSync(join(tmpdir(), 'sealed-carry-')), 'gitops');
  writeTreeAtomically(out, new Map([[REL, typeof sealedFile === 'string' ? sealedFile : 'x: 1\n']]));
  if (typeof sealedFile !== 'string') sealedFile(out);
  return out;
}

/** `yaml` with encryptedData values replaced. */
function sealed(yaml: string, values: Record<string, string>): string {
  const o = parse(yaml) as Any;
  Object.assign(o.spec.encryptedData, values);
  return objectToYaml(o);
}

const data = (files: ReadonlyMap<string, string>) => (parse(files.get(REL)!) as Any).spec.encryptedData as Record<string, string>;

describe('sealed values survive a re-render (#14 follow-up: sealed secrets)', () => {
  it('keeps sealed values for the keys still rendered; a removed key is dropped, a new key gets its placeholder', () => {
    const out = folder(sealed(rendered(['a', 'b']), { a: SEALED_A, b: SEALED_B }));
    const r = carryOverSealed(out, new Map([[REL, rendered(['a', 'c'])]]));
    expect(data(r.files)).toEqual({ a: SEALED_A, c: expect.stringMatching(/^SEAL-ME: kubeseal --raw --namespace tenant-t --name s \(key c\)$/) });
    expect([r.carried, r.placeholders, r.withPlaceholders]).toEqual([1, 1, 1]);
    // Sealed all over: the same bytes as the folder holds, so the tree is up to date.
    const all = sealed(rendered(['a', 'b']), { a: SEALED_A, b: SEALED_B });
    const again = carryOverSealed(folder(all), new Map([[REL, rendered(['a', 'b'])]]));
    expect(again.files.get(REL)).toBe(all);
    expect(again.placeholders).toBe(0);
  });

  it('carries nothing to a different object: another template type or sealing scope', () => {
    const old = sealed(rendered(['a']), { a: SEALED_A });
    expect(data(carryOverSealed(folder(old), new Map([[REL, rendered(['a'], 'kubernetes.io/tls')]])).files).a).toMatch(/^SEAL-ME/);
    const clusterWide = sealed(rendered(['a'], 'Opaque', { 'sealedsecrets.bitnami.com/cluster-wide': 'true' }), { a: SEALED_A });
    expect(data(carryOverSealed(folder(clusterWide), new Map([[REL, rendered(['a'])]])).files).a).toMatch(/^SEAL-ME/);
  });

  it('only base64 encryptedData values are carried; other fields an edit injected are not', () => {
    const o = parse(rendered(['a', 'b', 'c'])) as Any;
    o.spec.encryptedData = { a: SEALED_A, b: 'not sealed: $(rm -rf /)', c: { nested: SEALED_B } };
    o.spec.template.type = 'Opaque';
    o.spec.template.data = { injected: 'value' };
    o.metadata.labels = { evil: 'yes' };
    o.spec.extra = 'x';
    const r = carryOverSealed(folder(objectToYaml(o)), new Map([[REL, rendered(['a', 'b', 'c'])]]));
    const out = parse(r.files.get(REL)!) as Any;
    expect(out.spec.encryptedData.a).toBe(SEALED_A);
    expect(out.spec.encryptedData.b).toMatch(/^SEAL-ME/);
    expect(out.spec.encryptedData.c).toMatch(/^SEAL-ME/);
    expect(out.spec.template.data).toBeUndefined();
    expect(out.spec.extra).toBeUndefined();
    expect(out.metadata.labels?.evil).toBeUndefined();
  });

  it('hostile or broken files are ignored, never an error: not YAML, several documents, aliases, symlinks, a huge file, a FIFO, a folder', () => {
    const fresh = rendered(['a']);
    const outside = join(mkdtempSync(join(tmpdir(), 'sealed-outside-')), 'secret.yaml');
    writeFileSync(outside, sealed(fresh, { a: SEALED_A }));
    const cases: (string | ((dir: string) => void))[] = [
      '{{{ not: yaml ::',
      `${sealed(fresh, { a: SEALED_A })}---\nkind: Other\n`,
      `a: &x [${'1,'.repeat(50)}1]\nb: [*x, *x, *x]\n`,
      '\u0000\u0001binary',
      (dir) => {
        rmSync(join(dir, REL));
        symlinkSync(outside, join(dir, REL));
      },
      (dir) => {
        // A folder on the way that is a symlink to a folder outside.
        rmSync(join(dir, 'tenants', 't'), { recursive: true });
        const elsewhere = mkdtempSync(join(tmpdir(), 'sealed-elsewhere-'));
        writeFileSync(join(elsewhere, 'SealedSecret_tenant-t_s.yaml'), sealed(fresh, { a: SEALED_A }));
        symlinkSync(elsewhere, join(dir, 'tenants', 't'));
      },
      (dir) => {
        // Larger than any SealedSecret: not read.
        writeFileSync(join(dir, REL), `${sealed(fresh, { a: SEALED_A })}# ${'x'.repeat(MAX_SEALED_FILE)}\n`);
      },
      (dir) => {
        rmSync(join(dir, REL));
        mkdirSync(join(dir, REL));
      },
      (dir) => {
        // Opening a FIFO for reading would wait for a writer forever.
        rmSync(join(dir, REL));
        execFileSync('mkfifo', [join(dir, REL)]);
      },
    ];
    for (const c of cases) {
      const r = carryOverSealed(folder(c), new Map([[REL, fresh]]));
      expect(r.files.get(REL)).toBe(fresh);
      expect(r.carried).toBe(0);
    }
  });

  it('reads nothing from a folder crownlabs did not write, or from a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sealed-unmarked-'));
    mkdirSync(join(dir, 'tenants', 't'), { recursive: true });
    writeFileSync(join(dir, REL), sealed(rendered(['a']), { a: SEALED_A }));
    expect(carryOverSealed(dir, new Map([[REL, rendered(['a'])]])).carried).toBe(0);
    expect(carryOverSealed(join(dir, 'missing'), new Map([[REL, rendered(['a'])]])).carried).toBe(0);
  });
});
