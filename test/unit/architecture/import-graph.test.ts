// The layering of docs/architecture.md ("Layers"), checked on the real import graph of src/ and
// constructs/. The two lists below are today's known departures, each with its reason: the to-do
// of issue 18. A new violation or cycle fails; so does an entry that no longer matches (remove it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  areaOf,
  checkImportGraph,
  importCycles,
  layeringViolations,
  readImportGraph,
  type CycleException,
  type ImportGraph,
  type LayeringException,
} from '../../support/import-graph.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');


const LAYERING_EXCEPTIONS: readonly LayeringException[] = [];

const CYCLE_EXCEPTIONS: readonly CycleException[] = [];

describe('the import graph of src/ and constructs/', () => {
  const graph = readImportGraph(ROOT);

  it('is read from the sources: every layer of the core is there and imports something', () => {
    expect(graph.size).toBeGreaterThan(100);
    for (const f of ['src/compose/compose.ts', 'constructs/instance/instance-chart.ts', 'src/cli/main.ts']) expect(graph.get(f)?.length).toBeGreaterThan(0);
    expect(graph.get('src/compose/compose.ts')).toContain('constructs/instance/instance-chart.ts');
  });

  it('every module lies in a layer of the map', () => {
    expect([...graph.keys()].filter((f) => !areaOf(f))).toEqual([]);
  });

  it('holds no import against the layering beyond the exceptions list, and every exception still applies', () => {
    const result = checkImportGraph(graph, { layering: LAYERING_EXCEPTIONS, cycles: CYCLE_EXCEPTIONS });
    expect(result.newViolations).toEqual([]);
    expect(result.staleExceptions.filter((e) => e.startsWith('layering'))).toEqual([]);
  });

  it('holds no import cycle beyond the exceptions list, and every listed cycle still exists as listed', () => {
    const result = checkImportGraph(graph, { layering: LAYERING_EXCEPTIONS, cycles: CYCLE_EXCEPTIONS });
    expect(result.newCycles).toEqual([]);
    expect(result.staleExceptions.filter((e) => e.startsWith('cycle'))).toEqual([]);
  });

  it('every exception says why', () => {
    for (const e of [...LAYERING_EXCEPTIONS, ...CYCLE_EXCEPTIONS]) expect(e.reason.length).toBeGreaterThan(20);
  });
});

// The checker itself, on graphs made up here: each departure the real graph must not acquire.
const g = (edges: Record<string, string[]>): ImportGraph => new Map(Object.entries(edges));

describe('the layering check on a synthetic graph', () => {
  it('accepts the flow api → config → model → constructs → compose → sinks, features on the core and src/kube, the CLI on anything', () => {
    const ok = g({
      'src/sinks/files.ts': ['src/compose/compose.ts', 'src/runtime/bundle.mjs'],
      'src/compose/compose.ts': ['constructs/instance/instance-chart.ts', 'src/model/naming.ts', 'src/inputs/types.ts'],
      'constructs/instance/instance-chart.ts': ['src/model/naming.ts', 'src/config/config.ts', 'imports/kubevirt.io.ts'],
      'src/model/naming.ts': ['src/config/config.ts', 'src/inputs/types.ts'],
      'src/controller/controller.ts': ['src/kube/client.ts', 'src/compose/compose.ts'],
      'src/user-pods/service.ts': ['src/kube/client.ts'],
      'src/kube/client.ts': ['src/inputs/types.ts'],
      'src/platform/derive-rbac.ts': ['src/controller/caches.ts', 'src/bastion/tenant-watch.ts', 'src/kube/client.ts', 'src/compose/compose.ts'],
      'src/cli/main.ts': ['src/controller/controller.ts', 'src/user-pods/service.ts', 'src/sinks/files.ts', 'src/platform/derive-rbac.ts'],
    });
    expect(layeringViolations(ok)).toEqual([]);
    expect(importCycles(ok)).toEqual([]);
  });

  it.each([
    ['an import up the flow', 'src/model/naming.ts', 'src/compose/compose.ts', /up the flow/],
    ['a construct importing compose', 'constructs/bastion/bastion-deployment.ts', 'src/compose/compose.ts', /up the flow/],
    ['the core importing a feature', 'constructs/bastion/bastion-deployment.ts', 'src/bastion/ssh-tracker.ts', /core never imports outside/],
    ['a sink importing a feature', 'src/sinks/files.ts', 'src/controller/apply-set.ts', /core never imports outside/],
    ['a sink importing the offline validator', 'src/sinks/files.ts', 'src/validate/validator.ts', /core never imports outside/],
    ['the offline validator importing a feature', 'src/validate/validator.ts', 'src/controller/apply-set.ts', /shared infrastructure imports the core only/],
    ['a feature importing another', 'src/user-pods/service.ts', 'src/controller/kube-client.ts', /feature imports the core and shared/],
    ['a feature importing the CLI', 'src/user-pods/config.ts', 'src/cli/duration.ts', /feature imports the core and shared/],
    ['shared infrastructure importing a feature', 'src/kube/client.ts', 'src/controller/metrics.ts', /shared infrastructure imports the core only/],
    ['a feature importing the install assembly', 'src/controller/controller.ts', 'src/platform/install.ts', /feature imports the core and shared/],
    ['the install assembly importing the CLI', 'src/platform/install.ts', 'src/cli/main.ts', /assembly does not import the CLI/],
    ['a base module importing the core', 'src/paths.ts', 'src/inputs/types.ts', /base imports nothing/],
    ['a module outside the map', 'src/newthing/x.ts', 'src/inputs/types.ts', /in no layer/],
  ])('flags %s', (_what, from, to, problem) => {
    const v = layeringViolations(g({ [from]: [to] }));
    expect(v).toHaveLength(1);
    expect(v[0]).toMatchObject({ from, to });
    expect(v[0].problem).toMatch(problem);
  });

  it('finds cycles of any length and self-imports, and nothing on a chain', () => {
    expect(importCycles(g({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': ['a.ts'], 'd.ts': ['a.ts'] }))).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(importCycles(g({ 'a.ts': ['a.ts'] }))).toEqual([['a.ts']]);
    expect(importCycles(g({ 'a.ts': ['b.ts'], 'b.ts': ['c.ts'], 'c.ts': [] }))).toEqual([]);
    expect(importCycles(g({ 'a.ts': ['b.ts'], 'b.ts': ['a.ts'], 'c.ts': ['d.ts'], 'd.ts': ['c.ts'] }))).toEqual([
      ['a.ts', 'b.ts'],
      ['c.ts', 'd.ts'],
    ]);
  });

  it('a long chain does not overflow the stack', () => {
    const edges: Record<string, string[]> = {};
    for (let i = 0; i < 50_000; i++) edges[`m${i}.ts`] = [`m${i + 1}.ts`];
    edges['m50000.ts'] = ['m0.ts'];
    expect(importCycles(g(edges))[0]).toHaveLength(50_001);
  });

  it('an exception covers its own edge only: a new violation between the same folders, a grown cycle and a stale entry are all reported', () => {
    const graph = g({
      'src/user-pods/service.ts': ['src/controller/kube-client.ts', 'src/controller/apply-set.ts'],
      'src/controller/a.ts': ['src/controller/b.ts'],
      'src/controller/b.ts': ['src/controller/c.ts'],
      'src/controller/c.ts': ['src/controller/a.ts'],
    });
    const result = checkImportGraph(graph, {
      layering: [
        { from: 'src/user-pods/service.ts', to: 'src/controller/kube-client.ts', reason: 'listed' },
        { from: 'src/webhooks/server.ts', to: 'src/controller/http-endpoints.ts', reason: 'fixed since' },
      ],
      cycles: [{ files: ['src/controller/a.ts', 'src/controller/b.ts'], reason: 'listed when it was two modules' }],
    });
    expect(result.newViolations.map((v) => `${v.from} -> ${v.to}`)).toEqual(['src/user-pods/service.ts -> src/controller/apply-set.ts']);
    expect(result.newCycles).toEqual([['src/controller/a.ts', 'src/controller/b.ts', 'src/controller/c.ts']]);
    expect(result.staleExceptions).toEqual(['layering src/webhooks/server.ts -> src/controller/http-endpoints.ts', 'cycle src/controller/a.ts src/controller/b.ts']);
  });
});

describe('readImportGraph', () => {
  const dir = mkdtempSync(join(tmpdir(), 'import-graph-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads static imports, type imports, export … from and import(literal); not comments, strings, computed imports or packages', () => {
    const write = (p: string, text: string) => {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), text);
    };
    write(
      'src/a/main.ts',
      [
        "import { x } from '../b/x.ts';",
        "import type { T } from '../b/types.ts';",
        "export { y } from './y.ts';",
        "export * from './z.ts';",
        "const lazy = await import('../c/lazy.ts');",
        "// import '../c/commented.ts';",
        "const s = \"import('../c/in-string.ts')\";",
        'const computed = await import(`../c/${s}.ts`);',
        "import { Chart } from 'cdk8s';",
        "import { join } from 'node:path';",
        "import { run } from '../r/tool.mjs';",
      ].join('\n'),
    );
    for (const p of ['src/b/x.ts', 'src/b/types.ts', 'src/a/y.ts', 'src/a/z.ts', 'src/c/lazy.ts', 'src/r/tool.mjs']) write(p, '');
    write('src/r/tool.d.mts', 'export declare function run(): void;');
    const graph = readImportGraph(dir, ['src']);
    expect(graph.get('src/a/main.ts')).toEqual(['src/a/y.ts', 'src/a/z.ts', 'src/b/types.ts', 'src/b/x.ts', 'src/c/lazy.ts', 'src/r/tool.mjs']);
    expect(graph.has('src/r/tool.d.mts')).toBe(false);
  });
});
