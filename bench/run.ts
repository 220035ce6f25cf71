// npm run bench: every scenario in its own process (clean peak RSS), results into bench/RESULTS.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundledEntry, SOURCE_DIRS } from '../src/runtime/bundle.mjs';

const ROOT = join(import.meta.dirname, '..');
type Row = Record<string, unknown>;
// Scenarios run from an esbuild bundle, as the CLI and the controller do (bin/crownlabs.js).
const scenarioScript = (await bundledEntry('bench/scenario.ts', [...SOURCE_DIRS, 'bench', 'test/support'])).pathname;

function scenario(name: string, instances: number, tenants: number, workspaces: number): Row {
  const out = execFileSync(process.execPath, [scenarioScript, name, String(instances), String(tenants), String(workspaces)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const row = JSON.parse(out.trim().split('\n').pop()!) as Row;
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
}

/** The CLI end to end on a lab written to files (parse, validate, compose, render, write). */
function cli(command: 'synth' | 'gitops', instances: number, tenants: number, workspaces: number, jobs: number): Row {
  const dir = mkdtempSync(join(tmpdir(), 'crownlabs-bench-cli-'));
  execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'write-lab.ts'), String(instances), String(tenants), String(workspaces), join(dir, 'lab')]);
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, join(ROOT, 'bin', 'crownlabs.js'), command, '-f', join(dir, 'lab'), '-o', join(dir, 'out'), '-q', '-j', String(jobs), '--mydrive-nfs-server-name', 'nfs.example', '--gitops-repo-url', 'https://git.example.org/lab.git'], {
    encoding: 'utf8',
    env: { ...process.env, CI: 'true' },
  });
  const [wall, kb] = r.stderr.trim().split('\n').pop()!.split(' ');
  rmSync(dir, { recursive: true, force: true });
  const row = { scenario: `cli ${command} -j ${jobs}`, instances, tenants, workspaces, wallMs: Math.round(Number(wall) * 1000), maxRssMb: Math.round(Number(kb) / 1024), exit: r.status };
  process.stderr.write(`${JSON.stringify(row)}\n`);
  return row;
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
for (const command of ['synth', 'gitops'] as const) for (const jobs of [1, 2]) rows.push(cli(command, 5000, 1000, 50, jobs));

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
**cli** = the real command on a lab written as one file per tenant namespace (parse, validate,
render, atomic write), in one thread (\`-j 1\`) and on both cores (\`-j 2\`).
`;
// Keep the section bench/controller.ts writes (it needs the test cluster, so it runs on its own).
const resultsFile = join(ROOT, 'bench', 'RESULTS.md');
const controllerSection = existsSync(resultsFile) ? /<!-- bench:controller:start -->[\s\S]*?<!-- bench:controller:end -->\n?/.exec(readFileSync(resultsFile, 'utf8'))?.[0] : undefined;
writeFileSync(resultsFile, controllerSection ? `${text}\n${controllerSection}` : text);
process.stderr.write('bench/RESULTS.md written\n');
