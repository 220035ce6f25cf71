// The 5k lab's in-memory render and `cli synth` rows, the previous code against this one at each
// API level, alternating in one run so that the machine's drift falls on every variant alike:
//   node --import tsx bench/compare-prev.ts PREV_ROOT [ROUNDS]
// PREV_ROOT: a worktree of the previous code (with node_modules), which knows the default level only.
// Prints each measurement as a JSON line on stderr, then a Markdown table of medians on stdout.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_LEVEL, type ApiLevel } from '../src/inputs/api-level.ts';
import { SOURCE_DIRS } from '../src/runtime/bundle.mjs';

const ROOT = join(import.meta.dirname, '..');
const [prevRoot, roundsArg] = process.argv.slice(2);
if (!prevRoot) throw new Error('usage: compare-prev.ts PREV_ROOT [ROUNDS]');
const ROUNDS = Number(roundsArg ?? 3);
const SIZE = [5000, 1000, 50] as const;

interface Variant {
  name: string;
  root: string;
  level: ApiLevel;
  scenario: string;
  lab: string;
}

async function scenarioScript(root: string): Promise<string> {
  const { bundledEntry } = (await import(join(root, 'src/runtime/bundle.mjs'))) as typeof import('../src/runtime/bundle.mjs');
  return (await bundledEntry('bench/scenario.ts', [...SOURCE_DIRS, 'bench', 'test/support'], root)).pathname;
}

const dir = mkdtempSync(join(tmpdir(), 'crownlabs-bench-prev-'));
const writeLab = (level: ApiLevel, to: string) => execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'write-lab.ts'), ...SIZE.map(String), to, level]);
writeLab('2e8aeb9', join(dir, 'lab-2e8aeb9'));
writeLab('e62be9e', join(dir, 'lab-e62be9e'));
// Each variant edits its own copy (the one-changed row flips an Instance in it).
cpSync(join(dir, 'lab-2e8aeb9'), join(dir, 'lab-prev'), { recursive: true });

const prevCommit = execFileSync('git', ['-C', prevRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
const variants: Variant[] = [
  { name: `previous (${prevCommit}), 2e8aeb9`, root: prevRoot, level: '2e8aeb9', scenario: await scenarioScript(prevRoot), lab: join(dir, 'lab-prev') },
  { name: 'this code, 2e8aeb9', root: ROOT, level: '2e8aeb9', scenario: await scenarioScript(ROOT), lab: join(dir, 'lab-2e8aeb9') },
  { name: 'this code, e62be9e', root: ROOT, level: 'e62be9e', scenario: await scenarioScript(ROOT), lab: join(dir, 'lab-e62be9e') },
];

type Sample = { wallMs: number; cpuMs: number; maxRssMb: number };
const samples = new Map<string, Sample[]>();
const record = (variant: Variant, row: string, s: Sample) => {
  const key = `${variant.name}\0${row}`;
  samples.set(key, [...(samples.get(key) ?? []), s]);
  process.stderr.write(`${JSON.stringify({ variant: variant.name, row, ...s })}\n`);
};

function render(v: Variant): Sample {
  // The previous code's scenario takes no level argument (and has only the default).
  const args = [v.scenario, 'render', ...SIZE.map(String), ...(v.root === prevRoot ? [] : [v.level])];
  const out = execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 });
  const r = JSON.parse(out.trim().split('\n').pop()!) as Sample;
  return { wallMs: r.wallMs, cpuMs: r.cpuMs, maxRssMb: r.maxRssMb };
}

function cli(v: Variant, args: string[], cache: string): Sample {
  const levelFlag = v.level === DEFAULT_API_LEVEL ? [] : ['--api-level', v.level];
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, join(v.root, 'bin', 'crownlabs.js'), ...args, ...levelFlag, '-q', '--mydrive-nfs-server-name', 'nfs.example', '--gitops-repo-url', 'https://git.example.org/lab.git'], {
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', CROWNLABS_CACHE_DIR: cache },
  });
  if (r.status !== 0) throw new Error(`${v.name}: crownlabs ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  const [wall, user, sys, kb] = r.stderr.trim().split('\n').pop()!.split(' ');
  return { wallMs: Math.round(Number(wall) * 1000), cpuMs: Math.round((Number(user) + Number(sys)) * 1000), maxRssMb: Math.round(Number(kb) / 1024) };
}

function editOne(lab: string): void {
  const file = join(lab, 'instances-tenant-user-7.yaml');
  const text = readFileSync(file, 'utf8');
  writeFileSync(file, text.includes('running: true') ? text.replace('running: true', 'running: false') : text.replace('running: false', 'running: true'));
}

const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const loads: string[] = [loadavg()];
// Warm-up: each tree's CLI bundle made before anything is timed.
for (const root of [prevRoot, ROOT]) execFileSync(process.execPath, [join(root, 'bin', 'crownlabs.js'), '--version']);

for (let round = 0; round < ROUNDS; round++) {
  for (const v of variants) {
    record(v, 'render 5k (in memory)', render(v));
    const cache = join(dir, `cache-${round}-${variants.indexOf(v)}`);
    const out = join(dir, `out-${round}-${variants.indexOf(v)}`);
    const synth = ['synth', '-f', v.lab, '-o', out];
    record(v, 'cli synth cold', cli(v, synth, cache));
    record(v, 'cli synth warm, unchanged', cli(v, synth, cache));
    editOne(v.lab);
    record(v, 'cli synth warm, 1 Instance changed', cli(v, synth, cache));
    rmSync(cache, { recursive: true, force: true });
    rmSync(out, { recursive: true, force: true });
  }
  loads.push(loadavg());
}
rmSync(dir, { recursive: true, force: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : Math.round((s[s.length / 2 - 1] + s[s.length / 2]) / 2);
};
const rows = [...new Set([...samples.keys()].map((k) => k.split('\0')[1]))];
const cell = (v: Variant, row: string) => {
  const s = samples.get(`${v.name}\0${row}`)!;
  return `${median(s.map((x) => x.cpuMs))} / ${median(s.map((x) => x.wallMs))} / ${median(s.map((x) => x.maxRssMb))}`;
};
process.stdout.write(`${ROUNDS} rounds; load average (1, 5, 15 min) at the start and after each round: ${loads.join('; ')}\n\n`);
process.stdout.write(`| 5k lab, median of ${ROUNDS}: CPU ms / wall ms / peak RSS MB | ${variants.map((v) => v.name).join(' | ')} |\n|---|${variants.map(() => '---|').join('')}\n`);
for (const row of rows) process.stdout.write(`| ${row} | ${variants.map((v) => cell(v, row)).join(' | ')} |\n`);
