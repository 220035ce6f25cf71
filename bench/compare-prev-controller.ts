// The controller burst (bench/controller.ts), the previous code against this one at each API level,
// alternating in one run so that the machine's drift falls on every variant alike:
//   node --import tsx bench/compare-prev-controller.ts PREV_ROOT [ROUNDS]
// PREV_ROOT: a worktree of the previous code (with node_modules), which knows the default level only.
// Each run is a whole `bench:controller` with its own test cluster (TEST_CLUSTER_DIR under
// BENCH_COMPARE_DIR, default a fresh folder in the temp dir; stopped and removed after it), without
// the default-flags burst and with BENCH_TOTAL=BENCH_FIRST (no 5k phase: it measures the caches, not
// the burst). BENCH_FIRST, BENCH_PEERS, BENCH_HOLD_NODES and the other BENCH_* variables pass through.
// At e62be9e it runs both the migrated lab generateLab writes (its Instances' children pinned to
// 2e8aeb9 by the children-level annotation) and the same Instances new there (BENCH_CHILDREN).
// Each tree's bench/RESULTS.md is put back as it was (bench:controller rewrites its section).
// Prints each run as a JSON line on stderr, then a Markdown table of medians on stdout (with the
// audit log's `list pods`, in the burst and in the whole run).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiLevel } from '../src/inputs/api-level.ts';

const ROOT = join(import.meta.dirname, '..');
const [prevRoot, roundsArg] = process.argv.slice(2);
if (!prevRoot) throw new Error('usage: compare-prev-controller.ts PREV_ROOT [ROUNDS]');
const ROUNDS = Number(roundsArg ?? 3);
const FIRST = process.env.BENCH_FIRST ?? '1000';

interface Variant {
  name: string;
  root: string;
  level: ApiLevel;
  /** BENCH_CHILDREN at e62be9e: the burst's Instances new there, or migrated (2e8aeb9's children). */
  children?: 'new' | 'migrated';
}
const prevCommit = execFileSync('git', ['-C', prevRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const allVariants: Variant[] = [
  { name: `previous (${prevCommit}), 2e8aeb9`, root: prevRoot, level: '2e8aeb9' },
  { name: 'this code, 2e8aeb9', root: ROOT, level: '2e8aeb9' },
  { name: 'this code, e62be9e, migrated Instances', root: ROOT, level: 'e62be9e', children: 'migrated' },
  { name: 'this code, e62be9e, new Instances', root: ROOT, level: 'e62be9e', children: 'new' },
];
// BENCH_COMPARE_VARIANTS=0,1,3: a subset, by index in the list above (default all).
const picked = process.env.BENCH_COMPARE_VARIANTS?.split(',').map(Number);
const variants = picked ? allVariants.filter((_, i) => picked.includes(i)) : allVariants;

/** What bench/controller.ts logs as JSON after its phases (`burst: {…}`, `ready: … {…}`). */
interface Sample {
  wallS: number;
  cpuPer1k: number;
  peakRssMb: number;
  requestsPerInstance: number;
  fullReconciles: number;
  readyS?: number;
  readyRequestsPerInstance?: number;
  resyncWrites?: number;
  load: string;
  /** `list pods` in the burst's audit log (e62be9e's headless Services read their Pods). */
  listPodsBurst?: number;
  /** `list pods` in the whole run's audit log (burst, Ready phase and resync). */
  listPodsRun?: number;
  /** The whole bench:controller run, cluster start and stop included. */
  runS?: number;
}

function parse(v: Variant, stderr: string): Sample {
  const json = (prefix: string) => {
    const line = stderr.split('\n').find((l) => l.startsWith(`[bench:controller] ${prefix}`));
    return line ? (JSON.parse(line.slice(line.indexOf('{'))) as Record<string, unknown>) : undefined;
  };
  const burst = json('burst: ');
  if (!burst) throw new Error(`${v.name}: no burst line in bench:controller's output:\n${stderr.slice(-4000)}`);
  const byKind = String(burst.reconcilesByKind ?? '');
  const full = Number(/(\d+) Instance(?!\s+status)/.exec(byKind)?.[1] ?? NaN);
  const readyLine = stderr.split('\n').find((l) => l.startsWith('[bench:controller] ready: '));
  const ready = readyLine ? /after (\d+) ms;.*?(\{.*\})$/.exec(readyLine) : null;
  const readyAudit = ready ? (JSON.parse(ready[2]!) as { total: number }) : undefined;
  const resync = json('resync: ');
  return {
    wallS: Number(burst.allAppliedMs) / 1000,
    cpuPer1k: Number(burst.cpuPer1k),
    peakRssMb: Number(burst.peakRssMb),
    requestsPerInstance: Number(burst.requestsPerInstance),
    fullReconciles: full,
    readyS: ready ? Number(ready[1]) / 1000 : undefined,
    readyRequestsPerInstance: readyAudit ? +(readyAudit.total / Number(FIRST)).toFixed(2) : undefined,
    resyncWrites: resync ? Number(resync.writes) : undefined,
    listPodsBurst: Number((burst.byVerb as Record<string, number> | undefined)?.['list pods'] ?? 0),
    load: String(burst.load),
  };
}

const dir = process.env.BENCH_COMPARE_DIR ?? mkdtempSync(join(tmpdir(), 'crownlabs-bench-prev-controller-'));
const resultsFiles = [...new Set(variants.map((v) => join(v.root, 'bench', 'RESULTS.md')))];
const saved = new Map(resultsFiles.map((f) => [f, readFileSync(f, 'utf8')]));
const samples = new Map<string, Sample[]>();
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loads: string[] = [loadavg()];

function run(v: Variant, round: number): Sample {
  const clusterDir = join(dir, `cluster-${round}-${variants.indexOf(v)}`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(v.root, 'bench', 'controller.ts')], {
    cwd: v.root,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
    env: { ...process.env, BENCH_API_LEVEL: v.level, BENCH_CHILDREN: v.children ?? '', TEST_CLUSTER_DIR: clusterDir, BENCH_DEFAULT_BURST: '0', BENCH_FIRST: FIRST, BENCH_TOTAL: FIRST, BENCH_KEEP_CLUSTER: '' },
  });
  // The audit log outlives the stop: count the whole run's Pod lists before the folder goes.
  const audit = join(clusterDir, 'logs', 'audit.log');
  const listPodsRun = existsSync(audit)
    ? readFileSync(audit, 'utf8').split('\n').filter((l) => l.includes('"verb":"list"') && l.includes('"resource":"pods"')).length
    : undefined;
  // bench:controller stops its cluster in a finally; stop again in case it died before (idempotent).
  if (existsSync(clusterDir)) {
    spawnSync(join(v.root, 'scripts', 'test-cluster'), ['stop'], { env: { ...process.env, TEST_CLUSTER_DIR: clusterDir }, stdio: 'ignore' });
    rmSync(clusterDir, { recursive: true, force: true });
  }
  if (r.status !== 0) throw new Error(`${v.name}: bench:controller exited ${r.status}:\n${(r.stderr ?? '').slice(-4000)}`);
  return { ...parse(v, r.stderr), listPodsRun, runS: Math.round((Date.now() - t0) / 1000) };
}

try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of variants) {
      const s = run(v, round);
      samples.set(v.name, [...(samples.get(v.name) ?? []), s]);
      process.stderr.write(`${JSON.stringify({ round, variant: v.name, ...s })}\n`);
    }
    loads.push(loadavg());
  }
} finally {
  for (const [f, text] of saved) writeFileSync(f, text);
  if (!process.env.BENCH_COMPARE_DIR) rmSync(dir, { recursive: true, force: true });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const cell = (v: Variant, pick: (s: Sample) => number | undefined, digits: number) => {
  const xs = (samples.get(v.name) ?? []).map(pick).filter((x): x is number => x !== undefined && !Number.isNaN(x));
  if (!xs.length) return '–';
  return `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;
};
const rows: [string, (s: Sample) => number | undefined, number][] = [
  ['burst applied, wall s', (s) => s.wallS, 1],
  ['burst CPU-s per 1k Instances', (s) => s.cpuPer1k, 2],
  ['burst peak RSS MB', (s) => s.peakRssMb, 0],
  ['burst requests per Instance', (s) => s.requestsPerInstance, 2],
  ['full Instance reconciles in the burst', (s) => s.fullReconciles, 0],
  ['every running Instance Ready, s after the burst began', (s) => s.readyS, 1],
  ['requests per Instance until Ready', (s) => s.readyRequestsPerInstance, 2],
  ['resync writes', (s) => s.resyncWrites, 0],
  ['`list pods` in the burst (audit log)', (s) => s.listPodsBurst, 0],
  ['`list pods` in the whole run (audit log)', (s) => s.listPodsRun, 0],
];
process.stdout.write(`${ROUNDS} rounds of ${FIRST} Instances; load average (1, 5, 15 min) at the start and after each round: ${loads.join('; ')}\n\n`);
process.stdout.write(`| burst of ${FIRST}, median (range) of ${ROUNDS} | ${variants.map((v) => v.name).join(' | ')} |\n|---|${variants.map(() => '---|').join('')}\n`);
for (const [name, pick, digits] of rows) process.stdout.write(`| ${name} | ${variants.map((v) => cell(v, pick, digits)).join(' | ')} |\n`);
