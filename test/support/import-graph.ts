/**
 * The import graph of src/ and constructs/ and the layer map it is checked against
 * (docs/architecture.md, "Layers"). Pure functions over a graph, so a test can feed them a
 * synthetic one; `readImportGraph` builds the real one with TypeScript's own pre-processor
 * (static imports, `export … from`, `import('literal')`; comments and strings are skipped).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/** Repository-relative path (posix) → the repository-relative paths it imports. */
export type ImportGraph = Map<string, string[]>;

const SOURCE = /\.(ts|mts|mjs|js)$/;

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (SOURCE.test(name) && !name.endsWith('.d.ts') && !name.endsWith('.d.mts')) out.push(p);
  }
  return out;
}

/** A relative specifier as Node resolves it with our explicit extensions; the declaration file of a .mjs counts as it. */
function resolve(root: string, fromFile: string, spec: string): string {
  const abs = join(dirname(join(root, fromFile)), spec);
  const candidates = [abs, abs.replace(/\.js$/, '.ts'), `${abs}.ts`, join(abs, 'index.ts')];
  const hit = candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? abs;
  return relative(root, hit).split('\\').join('/').replace(/\.d\.mts$/, '.mjs');
}

/**
 * Every module specifier of every source file under `folders`, relative and package ones, by
 * repository-relative path: static imports, `export … from`, `import('literal')` and `require('literal')`.
 */
export function readImportSpecifiers(root: string, folders: readonly string[] = ['src', 'constructs']): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const folder of folders) {
    for (const abs of sourceFiles(join(root, folder))) {
      const info = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true);
      out.set(relative(root, abs).split('\\').join('/'), info.importedFiles.map((f) => f.fileName));
    }
  }
  return out;
}

/** Every relative import of every source file under `folders` (package imports are not edges). */
export function readImportGraph(root: string, folders: readonly string[] = ['src', 'constructs']): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const [file, specifiers] of readImportSpecifiers(root, folders)) {
    const targets = specifiers.filter((s) => s.startsWith('./') || s.startsWith('../'));
    graph.set(file, [...new Set(targets.map((s) => resolve(root, file, s)))].sort());
  }
  return graph;
}

export type Tier = 'base' | 'core' | 'shared' | 'feature' | 'assembly' | 'app';
export interface Area {
  /** Path prefix: a folder ending in `/`, or one file. */
  readonly prefix: string;
  readonly tier: Tier;
  /** Core only: position in the flow; a core area imports only core areas of lower or equal rank. */
  readonly rank?: number;
}

/**
 * The layers. base: imported by anyone, imports nothing of ours. core: the one-way flow.
 * shared: infrastructure features use (API client, outside systems). feature: imports base, core
 * and shared only, never another feature. assembly: the install of the whole product (src/platform),
 * which derives each component's RBAC from what the features declare and read, so it imports
 * features; only the CLI imports it. app: the CLI, imports anything, imported by nobody.
 */
export const LAYERS: readonly Area[] = [
  { prefix: 'src/paths.ts', tier: 'base' },
  { prefix: 'src/output-marker.ts', tier: 'base' },
  { prefix: 'src/cache-file.ts', tier: 'base' },
  { prefix: 'src/stat-key.ts', tier: 'base' },
  { prefix: 'src/runtime/', tier: 'base' },
  { prefix: 'imports/', tier: 'base' },
  { prefix: 'src/inputs/', tier: 'core', rank: 1 },
  // Level migration (docs/behaviour.md §16.5): reads input types only; nothing in the flow uses it, the CLI does.
  { prefix: 'src/migrate/', tier: 'core', rank: 1.5 },
  { prefix: 'src/config/', tier: 'core', rank: 2 },
  { prefix: 'src/model/', tier: 'core', rank: 3 },
  { prefix: 'constructs/', tier: 'core', rank: 4 },
  { prefix: 'src/compose/', tier: 'core', rank: 5 },
  { prefix: 'src/sinks/', tier: 'core', rank: 6 },
  { prefix: 'src/kube/', tier: 'shared' },
  { prefix: 'src/integrations/keycloak/', tier: 'shared' },
  { prefix: 'src/integrations/registry/', tier: 'shared' },
  { prefix: 'src/integrations/prometheus/', tier: 'shared' },
  { prefix: 'src/integrations/mail/', tier: 'shared' },
  { prefix: 'src/validate/', tier: 'shared' },
  { prefix: 'src/controller/', tier: 'feature' },
  { prefix: 'src/webhooks/', tier: 'feature' },
  { prefix: 'src/user-pods/', tier: 'feature' },
  { prefix: 'src/platform/', tier: 'assembly' },
  { prefix: 'src/bastion/', tier: 'feature' },
  { prefix: 'src/cache/', tier: 'feature' },
  { prefix: 'src/cli/', tier: 'app' },
];

export function areaOf(file: string, layers: readonly Area[] = LAYERS): Area | undefined {
  let best: Area | undefined;
  for (const a of layers) if ((file === a.prefix || (a.prefix.endsWith('/') && file.startsWith(a.prefix))) && (!best || a.prefix.length > best.prefix.length)) best = a;
  return best;
}

/** Why `from` may not import `to`, or undefined when it may. */
export function layeringProblem(from: string, to: string, layers: readonly Area[] = LAYERS): string | undefined {
  const a = areaOf(from, layers);
  const b = areaOf(to, layers);
  if (!a) return `${from} is in no layer of the map`;
  if (!b) return `${to} is in no layer of the map`;
  if (a === b) return undefined;
  const ab = `${a.prefix} (${a.tier}) imports ${b.prefix} (${b.tier})`;
  if (b.tier === 'base') return undefined;
  switch (a.tier) {
    case 'base':
      return `${ab}: base imports nothing of ours`;
    case 'core':
      if (b.tier !== 'core') return `${ab}: the core never imports outside it`;
      return b.rank! <= a.rank! ? undefined : `${ab}: up the flow`;
    case 'shared':
      return b.tier === 'core' ? undefined : `${ab}: shared infrastructure imports the core only`;
    case 'feature':
      return b.tier === 'core' || b.tier === 'shared' ? undefined : `${ab}: a feature imports the core and shared infrastructure only`;
    case 'assembly':
      return b.tier === 'app' ? `${ab}: the assembly does not import the CLI` : undefined;
    case 'app':
      return undefined;
  }
}

export interface Violation {
  readonly from: string;
  readonly to: string;
  readonly problem: string;
}

export function layeringViolations(graph: ImportGraph, layers: readonly Area[] = LAYERS): Violation[] {
  const out: Violation[] = [];
  for (const [from, tos] of graph) {
    for (const to of tos) {
      const problem = layeringProblem(from, to, layers);
      if (problem) out.push({ from, to, problem });
    }
  }
  return out;
}

/** Strongly connected components with more than one module, or a module importing itself; each sorted, the list sorted. */
export function importCycles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const out: string[][] = [];
  let next = 0;
  const nodes = [...new Set([...graph.keys(), ...[...graph.values()].flat()])].sort();
  // Iterative Tarjan: a recursive one would overflow on a long import chain.
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; edge: number }[] = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length) {
      const top = work[work.length - 1];
      const edges = graph.get(top.node) ?? [];
      if (top.edge < edges.length) {
        const to = edges[top.edge++];
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) low.set(top.node, Math.min(low.get(top.node)!, index.get(to)!));
        continue;
      }
      work.pop();
      if (work.length) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent)!, low.get(top.node)!));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const scc: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          scc.push(n);
        } while (n !== top.node);
        if (scc.length > 1 || (graph.get(top.node) ?? []).includes(top.node)) out.push(scc.sort());
      }
    }
  }
  return out.sort((x, y) => x.join().localeCompare(y.join()));
}

export interface LayeringException {
  readonly from: string;
  readonly to: string;
  readonly reason: string;
}
export interface CycleException {
  readonly files: readonly string[];
  readonly reason: string;
}

export interface CheckResult {
  /** Violations no exception covers. */
  readonly newViolations: Violation[];
  /** Cycles no exception matches exactly (a listed cycle that grew counts as new). */
  readonly newCycles: string[][];
  /** Exceptions that match nothing any more: remove them from the list. */
  readonly staleExceptions: string[];
}

/** The graph against the layer map and the exceptions lists. */
export function checkImportGraph(
  graph: ImportGraph,
  exceptions: { layering: readonly LayeringException[]; cycles: readonly CycleException[] },
  layers: readonly Area[] = LAYERS,
): CheckResult {
  const violations = layeringViolations(graph, layers);
  const allowed = new Set(exceptions.layering.map((e) => `${e.from} -> ${e.to}`));
  const seen = new Set(violations.map((v) => `${v.from} -> ${v.to}`));
  const cycles = importCycles(graph);
  const allowedCycles = new Set(exceptions.cycles.map((c) => [...c.files].sort().join(' ')));
  const seenCycles = new Set(cycles.map((c) => c.join(' ')));
  return {
    newViolations: violations.filter((v) => !allowed.has(`${v.from} -> ${v.to}`)),
    newCycles: cycles.filter((c) => !allowedCycles.has(c.join(' '))),
    staleExceptions: [
      ...[...allowed].filter((k) => !seen.has(k)).map((k) => `layering ${k}`),
      ...[...allowedCycles].filter((k) => !seenCycles.has(k)).map((k) => `cycle ${k}`),
    ],
  };
}
