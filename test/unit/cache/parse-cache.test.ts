import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { ParsedInput } from '../../../src/inputs/parse.ts';
import { readInputs } from '../../../src/inputs/parse.ts';
import { ParseCache } from '../../../src/cache/parse-cache.ts';
import { LAB } from '../../support/cli.ts';

/** What a parse gives, sources without their functions (locate is compared through the problems it positions). */
const plain = (p: ParsedInput) => ({
  objects: p.objects.map((o) => ({ object: o.object, source: { ...o.source, locate: typeof o.source.locate } })),
  problems: p.problems,
  files: p.files,
});

describe('parse cache', () => {
  let root: string;
  let lab: string;
  let dir: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'parse-cache-'));
    lab = join(root, 'lab');
    dir = join(root, 'cache');
    cpSync(LAB, lab, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** One run as the CLI does it: read through the cache, then save it. */
  function run(codeHash = 'code-1') {
    const memo = ParseCache.open({ inputs: [lab], dir, codeHash })!;
    const parsed = readInputs([lab], { cwd: root, memo });
    memo.save();
    return { parsed, hits: memo.hits, misses: memo.misses };
  }
  const fresh = () => readInputs([lab], { cwd: root });

  it('an unchanged file is taken from the cache and gives what parsing it gives', () => {
    const files = readdirSync(lab).length;
    expect(run()).toMatchObject({ hits: 0, misses: files });
    const warm = run();
    expect(warm).toMatchObject({ hits: files, misses: 0 });
    expect(plain(warm.parsed)).toEqual(plain(fresh()));
    // Defaults applied by the schema check are in the cached objects too.
    expect(warm.parsed.objects.length).toBeGreaterThan(10);
  });

  it('an edited file misses, and only it; another code version or a damaged cache misses all', () => {
    const files = readdirSync(lab).length;
    run();
    const file = join(lab, 'instances.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('name: green-tea-6831', 'name: green-tea-6832'));
    const edited = run();
    expect(edited).toMatchObject({ hits: files - 1, misses: 1 });
    expect(plain(edited.parsed)).toEqual(plain(fresh()));
    expect(run('code-2')).toMatchObject({ hits: 0, misses: files });
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      const text = readFileSync(p, 'utf8');
      const damaged = text.replace('"kind":"Instance"', '"kind":"Tenant"');
      expect(damaged).not.toBe(text);
      writeFileSync(p, damaged);
    }
    expect(run('code-2')).toMatchObject({ hits: 0, misses: files });
    expect(plain(run('code-2').parsed)).toEqual(plain(fresh()));
  });

  it('a problem found later about a cached object names the same line as after a fresh parse', () => {
    // An Instance of a Template that does not exist, in a List: the reference problem points into the file.
    writeFileSync(
      join(lab, 'z-orphan.yaml'),
      'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: crownlabs.polito.it/v1alpha2\n    kind: Instance\n    metadata:\n      name: orphan\n      namespace: tenant-john-doe\n    spec:\n      template.crownlabs.polito.it/TemplateRef:\n        name: missing\n        namespace: workspace-tea\n      tenant.crownlabs.polito.it/TenantRef:\n        name: john.doe\n',
    );
    const load = () => {
      const memo = ParseCache.open({ inputs: [lab], dir, codeHash: 'code-1' })!;
      const r = loadInventory([lab], { cwd: root, memo });
      memo.save();
      return { problems: r.problems, hits: memo.hits };
    };
    const first = load();
    const orphan = first.problems.filter((p) => p.file?.endsWith('z-orphan.yaml'));
    expect(orphan.length).toBeGreaterThan(0);
    expect(orphan.every((p) => typeof p.line === 'number' && p.line > 3)).toBe(true);
    const second = load();
    expect(second.hits).toBe(readdirSync(lab).length);
    expect(second.problems).toEqual(first.problems);
  });

  it('keeps no file with anchors, with an error, or with a value JSON cannot carry', () => {
    writeFileSync(join(lab, 'anchors.yaml'), readFileSync(join(lab, 'workspaces.yaml'), 'utf8').replace(/^kind: Workspace$/m, 'kind: &k Workspace').replace(/name: /g, 'name: a'));
    writeFileSync(join(lab, 'broken.yaml'), 'apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata:\n  name: x\nspec:\n  nonsense: 1\n');
    // -0.0, read as -0 (a valid quota): JSON would give back 0. Moved from tenants.yaml, so the names stay unique.
    const tenants = readFileSync(join(lab, 'tenants.yaml'), 'utf8');
    rmSync(join(lab, 'tenants.yaml'));
    writeFileSync(join(lab, 'minus-zero.yaml'), tenants.replace(/^(\s+)cpu: 8$/m, '$1cpu: -0.0'));
    expect(fresh().problems.filter((p) => p.file?.endsWith('minus-zero.yaml'))).toEqual([]);
    run();
    const second = run();
    expect(second.misses).toBe(3);
    expect(plain(second.parsed)).toEqual(plain(fresh()));
  });

  it('is off with CROWNLABS_RENDER_CACHE=0 and when the cache folder overlaps an input', () => {
    expect(ParseCache.open({ inputs: [lab], dir: join(lab, 'cache') })).toBeUndefined();
    process.env.CROWNLABS_RENDER_CACHE = '0';
    try {
      expect(ParseCache.open({ inputs: [lab], dir })).toBeUndefined();
    } finally {
      delete process.env.CROWNLABS_RENDER_CACHE;
    }
  });
});
