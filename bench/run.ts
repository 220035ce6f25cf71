// npm run bench: every scenario in its own process (clean peak RSS), results into bench/RESULTS.md.
// At an API level: `npm run bench -- e62be9e` or BENCH_API_LEVEL=e62be9e (inputs in its shape, CLI --api-level).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_API_LEVEL } from '../src/inputs/api-level.ts';
import { bundledEntry, SOURCE_DIRS } from '../src/runtime/bundle.mjs';
import { benchApiLevel } from './level.ts';

const ROOT = join(import.meta.dirname, '..');
type Row = Record<string, unknown>;
const level = benchApiLevel(process.argv[2]);
/** The CLI's flag for the level; none at the default, so the rows run as before the levels. */
const levelFlag = level === DEFAULT_API_LEVEL ? [] : ['--api-level', level];
// Scenarios run from an esbuild bundle, as the CLI and the controller do (bin/crownlabs.js).
const scenarioScript = (await bundledEntry('bench/scenario.ts', [...SOURCE_DIRS, 'bench', 'test/support'])).pathname;

function scenario(name: string, instances: number, tenants: number, workspaces: number): Row {
  const out = execFileSync(process.execPath, [scenarioScript, name, String(instances), String(tenants), String(workspaces), level], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const row = JSON.parse(out.trim().split('\n').pop()!) as Row;
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
}

/** A lab written as one file per tenant namespace, as `cli` rows read it. */
function writeLab(instances: number, tenants: number, workspaces: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'crownlabs-bench-cli-'));
  execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'write-lab.ts'), String(instances), String(tenants), String(workspaces), join(dir, 'lab'), level]);
  return dir;
}

/**
 * The CLI end to end on a lab written to files (parse, validate, compose, render, write), timed by
 * /usr/bin/time: wall, CPU (user + sys, steadier than wall on a shared machine) and peak RSS.
 * `cache`: the render cache folder (CROWNLABS_CACHE_DIR); a fresh one makes a cold run.
 */
function cli(label: string, args: string[], size: [number, number, number], cache: string): Row {
  const r = spawnSync('/usr/bin/time', ['-f', '%e %U %S %M', process.execPath, join(ROOT, 'bin', 'crownlabs.js'), ...args, ...levelFlag, '-q', '--mydrive-nfs-server-name', 'nfs.example', '--gitops-repo-url', 'https://git.example.org/lab.git'], {
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', CROWNLABS_CACHE_DIR: cache },
  });
  const [wall, user, sys, kb] = r.stderr.trim().split('\n').pop()!.split(' ');
  const [instances, tenants, workspaces] = size;
  const row = { scenario: `cli ${label}`, instances, tenants, workspaces, wallMs: Math.round(Number(wall) * 1000), cpuMs: Math.round((Number(user) + Number(sys)) * 1000), maxRssMb: Math.round(Number(kb) / 1024), exit: r.status };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
}

/** Every CLI row on one 5k lab: cold, warm (nothing changed), one Instance changed, validate, -j 2. */
function cliRows(instances: number, tenants: number, workspaces: number): Row[] {
  const dir = writeLab(instances, tenants, workspaces);
  const lab = join(dir, 'lab');
  const size: [number, number, number] = [instances, tenants, workspaces];
  const rows: Row[] = [];
  let n = 0;
  const coldCache = () => join(dir, `cache-${n++}`);
  const out = (c: string) => join(dir, `out-${c}`);
  // One Instance edited: its file's first `running:` flipped.
  const editOne = () => {
    const file = join(lab, 'instances-tenant-user-7.yaml');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.includes('running: true') ? text.replace('running: true', 'running: false') : text.replace('running: false', 'running: true'));
  };
  for (const command of ['synth', 'gitops'] as const) {
    const cache = coldCache();
    rows.push(cli(`${command} cold`, [command, '-f', lab, '-o', out(command)], size, cache));
    rows.push(cli(`${command} warm, unchanged`, [command, '-f', lab, '-o', out(command)], size, cache));
    editOne();
    rows.push(cli(`${command} warm, 1 Instance changed`, [command, '-f', lab, '-o', out(command)], size, cache));
    rmSync(out(command), { recursive: true, force: true });
    rows.push(cli(`${command} -j 2 (no cache)`, [command, '-f', lab, '-o', out(command), '-j', '2'], size, coldCache()));
  }
  rows.push(cli('validate', ['validate', '-f', lab], size, coldCache()));
  rmSync(dir, { recursive: true, force: true });
  return rows;
}

const rows: Row[] = [];
for (const [i, t, w] of [
  [1000, 200, 10],
  [5000, 1000, 50],
] as const) {
  rows.push(scenario('render', i, t, w));
  rows.push(scenario('gitops', i, t, w));
  if (i >= 5000) {
    rows.push(scenario('render -j 2', i, t, w));
    rows.push(scenario('gitops -j 2', i, t, w));
  }
  rows.push(scenario('naive', i, t, w));
}
rows.push(scenario('per-instance', 5000, 1000, 50));
rows.push(scenario('emitters', 1000, 200, 10));
rows.push(scenario('parse', 5000, 1000, 50));
rows.push(scenario('watch', 5000, 1000, 50));
rows.push(...cliRows(5000, 1000, 50));
// Scale check (#16.3): 4× the 5k lab; time and memory should grow at most 4.2×.
const big = scenario('render', 20000, 4000, 200);
rows.push(big);
const five = rows.find((r) => r.scenario === 'render' && r.instances === 5000)!;
rows.push({ scenario: 'render 20k / 5k', instances: '×4', tenants: '×4', workspaces: '×4', time: +((big.wallMs as number) / (five.wallMs as number)).toFixed(2), cpu: +((big.cpuMs as number) / (five.cpuMs as number)).toFixed(2), memory: +((big.maxRssMb as number) / (five.maxRssMb as number)).toFixed(2) });

const fmt = (r: Row) => {
  const { scenario: s, instances, tenants, workspaces, ...rest } = r;
  const objs = typeof rest.objects === 'number' && typeof rest.wallMs === 'number' ? ` (${Math.round(((rest.objects as number) / (rest.wallMs as number)) * 1000)} objects/s)` : '';
  return `| ${s} | ${instances} / ${tenants} / ${workspaces} | ${Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : v}`).join(', ')}${objs} |`;
};
const load = execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).trim();
const text = `# Benchmark results

Written by \`npm run bench\` (bench/run.ts); each scenario runs in its own process.

- date: ${new Date().toISOString()}
- machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}
- load average at the end: ${load}
- API level: ${level}${level === DEFAULT_API_LEVEL ? ' (the default)' : ''}

| scenario | instances / tenants / workspaces | result |
|---|---|---|
${rows.map(fmt).join('\n')}

Scenarios: **render** = compose + render every set + emit YAML in one thread (in memory);
**gitops** = the same into the Argo CD tree layout; **-j 2** = the same on both cores (this thread and
a render worker claim chunks of sets; the worker's start-up is in the time); **naive** = the baseline, every instance chart in
one cdk8s App and \`app.synth()\`; **per-instance** = one Instance composed and rendered (median, warm);
**emitters** = the same objects through js-yaml, the \`yaml\` package and JSON.stringify (why
src/sinks/yaml-emitter.ts exists); **parse** = reading the lab from YAML text with schema validation
and defaults; **watch** = one edited Instance in \`gitops --watch\` (re-parse, re-render, rewrite);
**cli** = the real command, whole process (\`/usr/bin/time\`: wall, CPU = user + sys, peak RSS), on a
lab written as one file per tenant namespace (parse, validate, render, atomic write): **cold** = empty
render cache and no output folder; **warm, unchanged** = the same again (every set from the render
cache, nothing written); **warm, 1 Instance changed** = one Instance edited, the rest from the cache;
**-j 2** = both cores, no render cache; **validate** = render + offline schema validation (the check on a second thread: \`-j 2\`, its default);
**render 20k / 5k** = the scale check: ratios of the in-memory render's time and peak RSS at 4× the lab.
`;
// Keep the section bench/controller.ts writes (it needs the test cluster, so it runs on its own).
const resultsFile = join(ROOT, 'bench', 'RESULTS.md');
const previous = existsSync(resultsFile) ? readFileSync(resultsFile, 'utf8') : '';
const controllerSection = /<!-- bench:controller:start -->[\s\S]*?<!-- bench:controller:end -->\n?/.exec(previous)?.[0];
// And the notes written by hand on what was compared (measured side by side, not by this script).
const notesSection = /<!-- bench:notes:start -->[\s\S]*?<!-- bench:notes:end -->\n?/.exec(previous)?.[0];
writeFileSync(resultsFile, [text, notesSection, controllerSection].filter(Boolean).join('\n'));
process.stderr.write('bench/RESULTS.md written\n');
