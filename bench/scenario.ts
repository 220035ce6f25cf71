// One benchmark scenario in its own process, so that its peak RSS is its own.
// scenario.ts NAME INSTANCES TENANTS WORKSPACES [LEVEL]: LEVEL (or BENCH_API_LEVEL) is the API level
// of the generated inputs and of what is rendered. Prints one JSON line: { wallMs, objects, bytes, maxRssMb, ... }.
import { performance } from 'node:perf_hooks';
import { App } from 'cdk8s';
import jsYaml from 'js-yaml';
import { stringify } from 'yaml';
import { InstanceChart } from '../constructs/instance/instance-chart.ts';
import { Inventory } from '../src/inputs/inventory.ts';
import { parseInputText } from '../src/inputs/parse.ts';
import type { KubeObject } from '../src/inputs/types.ts';
import { compose, renderUnit } from '../src/compose/compose.ts';
import { defaultConfig } from '../src/config/config.ts';
import { planInstance } from '../src/model/instance-plan.ts';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyFileChanges } from '../src/cli/gitops.ts';
import { LabSession } from '../src/compose/incremental.ts';
import { writeTreeAtomically } from '../src/sinks/atomic-tree.ts';
import { GitopsTreeBuilder } from '../src/sinks/gitops.ts';
import { renderParallel } from '../src/sinks/parallel/render-pool.ts';
import { objectsToYaml } from '../src/sinks/yaml-emitter.ts';
import { generateLab as generateAt, type LabSize } from '../test/support/generate-lab.ts';
import { benchApiLevel } from './level.ts';

const [scenario, instancesArg, tenantsArg, workspacesArg, levelArg] = process.argv.slice(2);
const size = { instances: Number(instancesArg), tenants: Number(tenantsArg), workspaces: Number(workspacesArg) };
const level = benchApiLevel(levelArg);
const config = { ...defaultConfig(), mydriveNfsServerName: 'nfs.example', apiLevel: level };
const generateLab = (s: LabSize) => generateAt(s, level);

function inventory(): Inventory {
  return Inventory.fromObjects(
    generateLab(size).map((object) => ({ object, source: { file: 'generated', document: 0 } })),
    undefined,
    level,
  ).inventory;
}

function peakMb(): number {
  return Math.round(process.resourceUsage().maxRSS / 1024);
}

const result: Record<string, unknown> = { scenario, ...size };
const inv = inventory();

if (scenario === 'render') {
  // compose + render every set + emit YAML, one App per set, sets discarded as they are written.
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const composition = compose(inv, config);
  let objects = 0;
  let bytes = 0;
  for (const unit of composition.units) {
    const objs = renderUnit(unit);
    objects += objs.length;
    bytes += objectsToYaml(objs).length;
  }
  result.wallMs = Math.round(performance.now() - t0);
  const cpu = process.cpuUsage(c0);
  // CPU time (GC threads included) is steadier than wall time on a shared machine.
  result.cpuMs = Math.round((cpu.user + cpu.system) / 1000);
  result.sets = composition.units.length;
  result.objects = objects;
  result.yamlMb = +(bytes / 1e6).toFixed(1);
} else if (scenario === 'render -j 2' || scenario === 'gitops -j 2') {
  // The same on both cores: this thread and a worker claim chunks of sets (worker start-up included).
  const gitops = scenario.startsWith('gitops');
  const t0 = performance.now();
  const composition = compose(inv, config);
  const builder = new GitopsTreeBuilder(config);
  const out = await renderParallel(composition.units, inv.allObjects(), config, gitops ? 'gitops' : 'synth', gitops ? builder : undefined, { threads: 2 });
  if (gitops) result.files = builder.filesOf(composition.units.map((unit, i) => ({ unit, objectCount: out[i].objectCount }))).size;
  result.wallMs = Math.round(performance.now() - t0);
  result.sets = out.length;
  if (!gitops) result.yamlMb = +(out.reduce((n, s) => n + s.yaml!.length, 0) / 1e6).toFixed(1);
} else if (scenario === 'naive') {
  // The baseline: every instance chart in one App, then app.synth() into a temp folder.
  const t0 = performance.now();
  const app = new App({ outdir: `/tmp/crownlabs-bench-naive-${process.pid}` });
  let i = 0;
  for (const instance of inv.instances.values()) {
    const r = planInstance(instance, inv, config);
    if (r.plan) new InstanceChart(app, `instance-${i++}`, { plan: r.plan, config });
  }
  app.synth();
  result.wallMs = Math.round(performance.now() - t0);
  result.charts = i;
} else if (scenario === 'per-instance') {
  // Median time to compose and render one Instance (warm).
  const composition = compose(inv, config);
  const units = composition.units.filter((u) => u.parent.kind === 'Instance');
  for (const u of units.slice(0, 200)) renderUnit(u);
  const times: number[] = [];
  for (const u of units) {
    const t0 = performance.now();
    renderUnit(u);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  result.medianMs = +times[Math.floor(times.length / 2)].toFixed(3);
  result.p99Ms = +times[Math.floor(times.length * 0.99)].toFixed(3);
} else if (scenario === 'emitters') {
  // The same objects through each candidate YAML emitter, and JSON for scale.
  const composition = compose(inv, config);
  const objs: KubeObject[] = composition.units.flatMap((u) => renderUnit(u));
  const time = (f: () => string) => {
    const t0 = performance.now();
    const s = f();
    return { ms: Math.round(performance.now() - t0), mb: +(s.length / 1e6).toFixed(1) };
  };
  result.jsYaml = time(() => objs.map((o) => jsYaml.dump(o, { noRefs: true, lineWidth: -1 })).join('---\n'));
  result.yamlPackage = time(() => objs.map((o) => stringify(o)).join('---\n'));
  result.json = time(() => objs.map((o) => JSON.stringify(o)).join('\n'));
} else if (scenario === 'gitops') {
  // Full gitops tree of the lab: compose, render, Argo CD layout, emit (in memory: disk speed aside).
  const t0 = performance.now();
  const files = new GitopsTreeBuilder(config).render(compose(inv, config).units);
  result.wallMs = Math.round(performance.now() - t0);
  result.files = files.size;
} else if (scenario === 'watch') {
  // One changed Instance in watch mode on a lab written as one file per tenant namespace.
  const dir = mkdtempSync(join(tmpdir(), 'crownlabs-bench-watch-'));
  const byFile = new Map<string, unknown[]>();
  for (const o of generateLab(size)) {
    const f = o.kind === 'Instance' ? `instances-${o.metadata.namespace}.yaml` : `${o.kind.toLowerCase()}s.yaml`;
    byFile.set(f, [...(byFile.get(f) ?? []), o]);
  }
  for (const [f, objs] of byFile) writeFileSync(join(dir, f), objs.map((o) => jsYaml.dump(o)).join('---\n'));
  const session = new LabSession([dir], config, dir);
  const builder = new GitopsTreeBuilder(config);
  const out = join(dir, '..', `${dir.split('/').pop()}-gitops`);
  const t0 = performance.now();
  session.load();
  let files = builder.files(session.renderedSets());
  session.releaseObjects(); // as gitops --watch: the builder keeps the files
  writeTreeAtomically(out, files);
  result.initialMs = Math.round(performance.now() - t0);
  const times: number[] = [];
  for (let i = 0; i < 5; i++) {
    const file = join(dir, `instances-tenant-user-${i * 7}.yaml`);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.includes('running: true') ? text.replace('running: true', 'running: false') : text.replace('running: false', 'running: true'));
    const t1 = performance.now();
    const update = session.update([file]);
    const next = builder.files(session.renderedSets());
    session.releaseObjects();
    applyFileChanges(out, files, next);
    files = next;
    times.push(performance.now() - t1);
    if (!update.applied) throw new Error('watch update failed');
  }
  times.sort((a, b) => a - b);
  result.updateMedianMs = Math.round(times[2]);
  result.updateMaxMs = Math.round(times[4]);
  rmSync(dir, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
} else if (scenario === 'parse') {
  // Reading the lab back from YAML text: parse, validate against the CRDs, default, resolve.
  const text = generateLab(size)
    .map((o) => jsYaml.dump(o))
    .join('---\n');
  const t0 = performance.now();
  const parsed = parseInputText(text, 'lab.yaml', level);
  const { problems } = Inventory.fromObjects(parsed.objects, undefined, level);
  result.wallMs = Math.round(performance.now() - t0);
  result.inputMb = +(text.length / 1e6).toFixed(1);
  result.problems = parsed.problems.length + problems.filter((p) => p.severity === 'error').length;
}
result.maxRssMb = peakMb();
process.stdout.write(`${JSON.stringify(result)}\n`);
