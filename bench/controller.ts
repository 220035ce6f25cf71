// npm run bench:controller — the apply-controller on the real test cluster (scripts/test-cluster,
// its own state dir, with kwok's simulated nodes): a burst of 1,000 Instances across 100 tenants
// (time until every Instance's children are applied and its status written, API requests per
// Instance, reconciles/s, peak RSS; then the time until every running Instance is Ready, its VMs
// and pods run by kwok's Stages), a steady-state resync of that lab (writes, time), then 5,000
// Instances in the caches (RSS). The controller runs in its own process
// (bench/controller-child.ts). Writes its section of bench/RESULTS.md. Environment: BENCH_QPS,
// BENCH_BURST, BENCH_WORKERS, BENCH_FIRST (1000: the burst), BENCH_TOTAL (5000),
// TEST_CLUSTER_DIR (default /tmp/crownlabs-bench-controller), BENCH_KEEP_CLUSTER=1.
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { installCrds } from '../test/integration/global-setup.ts';
import { listObjects, rest, TEST_CLUSTER_SCRIPT, type KubeObject } from '../test/integration/cluster.ts';
import { generateLab } from '../test/support/generate-lab.ts';
import { bundledEntry, SOURCE_DIRS } from '../src/runtime/bundle.mjs';

const ROOT = join(import.meta.dirname, '..');
const QPS = Number(process.env.BENCH_QPS ?? 100);
const BURST = Number(process.env.BENCH_BURST ?? 100);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 8);
const TOTAL = Number(process.env.BENCH_TOTAL ?? 5000);
const FIRST = Number(process.env.BENCH_FIRST ?? 1000);
const TENANTS = 100;
const WORKSPACES = 10;
const dir = process.env.TEST_CLUSTER_DIR ?? '/tmp/crownlabs-bench-controller';
// A /16 Service range: the default /24 holds 254 Services, the burst needs one per running Instance.
// (The controller-manager, scheduler and kwok run too: start --with-nodes below.)
const env = { ...process.env, TEST_CLUSTER_DIR: dir, TEST_CLUSTER_SERVICE_CIDR: process.env.TEST_CLUSTER_SERVICE_CIDR ?? '10.0.0.0/16' };
const log = (m: string) => process.stderr.write(`[bench:controller] ${m}\n`);
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Stats = { reconciledOk: number; requests: number; writes: number; reconciles: number; failed: number; instances: number; withStatus: number; cachedObjects: number; idle: boolean; rssMb: number; heapMb: number; heapTotalMb: number; externalMb: number; peakRssMb: number };

function ask<T = { stats: Stats }>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type !== type) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.send({ type });
  });
}

/** Creates objects with `concurrency` requests in flight. */
async function createAll(objects: KubeObject[], concurrency = 32): Promise<void> {
  const c = rest();
  const queue = [...objects];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let o = queue.shift(); o; o = queue.shift()) {
        const p = await c.resourcePath(o.apiVersion, o.kind, o.metadata.namespace ?? null);
        await c.request('POST', p, { body: o });
      }
    }),
  );
}

async function until(child: ChildProcess, done: (s: Stats) => boolean, timeoutMs: number, what: string): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stats } = await ask(child, 'stats');
    if (done(stats)) return stats;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(stats)}`);
    await sleep(250);
  }
}

async function waitNamespaces(names: string[]): Promise<void> {
  for (;;) {
    const live = new Set((await listObjects('v1', 'Namespace')).map((n) => n.metadata.name));
    if (names.every((n) => live.has(n))) return;
    await sleep(500);
  }
}

const loadStart = loadavg();
const rows: string[] = [];
let complete = false;
log(`starting the test cluster in ${dir}`);
const startCluster = (args: string[]) => execFileSync(TEST_CLUSTER_SCRIPT, ['start', ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n').pop()!;
const kubeconfig = startCluster([]);
process.env.TEST_CLUSTER_KUBECONFIG = kubeconfig;
process.env.TEST_CLUSTER_DIR = dir;
let child: ChildProcess | undefined;
try {
  // CRDs first: kube-controller-manager and kwok (its KubeVirt and CDI Stages) then see them.
  await installCrds(kubeconfig);
  startCluster(['--with-nodes']);
  const lab = generateLab({ instances: TOTAL, tenants: TENANTS, workspaces: WORKSPACES }) as KubeObject[];
  // The tenant quotas are enforced (kube-controller-manager's quota controller): raise the
  // workspaces' quotas so that each tenant's (the sum over its two workspaces, capped at 25 CPUs,
  // 50G and 10 Instances) admits its 10 Instances and their pods.
  for (const o of lab) if (o.kind === 'Workspace') (o.spec as { quota: unknown }).quota = { cpu: 16, memory: '32Gi', instances: 8 };
  const now = new Date().toISOString();
  // Tenants that logged in keep their personal namespace (docs/behaviour.md §5.3 step 5).
  for (const o of lab) if (o.kind === 'Tenant') (o.spec as { lastLogin?: string }).lastLogin = now;
  const of = (kind: string) => lab.filter((o) => o.kind === kind);
  const instances = of('Instance');

  // The controller runs from an esbuild bundle, as `crownlabs controller` does (bin/crownlabs.js).
  const childScript = (await bundledEntry('bench/controller-child.ts', [...SOURCE_DIRS, 'bench'])).pathname;
  child = fork(childScript, [kubeconfig, String(QPS), String(BURST), String(WORKERS)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await new Promise<void>((r) => child!.once('message', () => r()));
  const t00 = Date.now();
  await createAll([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'mydrive-pvcs' } }]);
  await createAll([...of('Workspace'), ...of('Tenant')]);
  await waitNamespaces([...of('Workspace').map((w) => `workspace-${w.metadata.name}`), ...of('Tenant').map((t) => `tenant-${t.metadata.name.replace(/\./g, '-')}`)]);
  await createAll(of('Template'));
  await sleep(2000);
  await until(child, (s) => s.idle, 300_000, 'tenants and workspaces');
  const setupMs = Date.now() - t00;
  log(`${WORKSPACES} workspaces and ${TENANTS} tenants converged in ${setupMs} ms`);
  rows.push(`| set-up: ${WORKSPACES} Workspaces + ${TENANTS} Tenants (namespaces, quotas, RBAC, MyDrive…) + 70 Templates | converged in ${(setupMs / 1000).toFixed(1)} s; load ${loadavg()} |`);

  // 1. The burst.
  const s0 = (await ask(child, 'stats')).stats;
  const t0 = Date.now();
  await createAll(instances.slice(0, FIRST));
  const createdMs = Date.now() - t0;
  const s1 = await until(child, (s) => s.reconciledOk >= FIRST && s.idle, 900_000, 'the burst');
  const burstMs = Date.now() - t0;
  const live = async (apiVersion: string, kind: string) => (await listObjects(apiVersion, kind, { labelSelector: 'app.kubernetes.io/managed-by=crownlabs-composer' })).length;
  const children = {
    VirtualMachine: await live('kubevirt.io/v1', 'VirtualMachine'),
    VirtualMachineInstance: await live('kubevirt.io/v1', 'VirtualMachineInstance'),
    Deployment: await live('apps/v1', 'Deployment'),
    Service: await live('v1', 'Service'),
    Ingress: await live('networking.k8s.io/v1', 'Ingress'),
  };
  const burst = {
    instances: FIRST,
    createdByClientMs: createdMs,
    allAppliedMs: burstMs,
    requests: s1.requests - s0.requests,
    requestsPerInstance: +((s1.requests - s0.requests) / FIRST).toFixed(2),
    writesPerInstance: +((s1.writes - s0.writes) / FIRST).toFixed(2),
    reconciles: s1.reconciles - s0.reconciles,
    failedReconciles: s1.failed - s0.failed,
    reconcilesPerSecond: +((s1.reconciles - s0.reconciles) / (burstMs / 1000)).toFixed(1),
    peakRssMb: s1.peakRssMb,
    children,
    load: loadavg(),
  };
  log(`burst: ${JSON.stringify(burst)}`);

  rows.push(
    `| burst: ${FIRST} Instances / ${TENANTS} tenants created at once | every Instance reconciled successfully (children applied, status written) in **${(burstMs / 1000).toFixed(1)} s** (the client needed ${(createdMs / 1000).toFixed(1)} s to create them); ${burst.reconciles} reconciles = **${burst.reconcilesPerSecond}/s**; **${burst.requestsPerInstance} API requests per Instance** (${burst.writesPerInstance} writes); ${burst.failedReconciles} failed reconciles; load ${burst.load} |`,
    `| children live after the burst | ${Object.entries(children).map(([k, v]) => `${v} ${k}`).join(', ')} |`,
    `| peak RSS during the burst | **${burst.peakRssMb} MB** |`,
  );
  writeResults();

  // Until every running Instance of the burst is Ready and every stopped one Off: kwok's Stages run
  // the VMs (DataVolume import 2.5 s, VMI 2 s) and the pods, the controller writes the phases.
  const burstInstances = instances.slice(0, FIRST);
  const wanted = new Map(burstInstances.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, (o.spec as { running: boolean }).running ? 'Ready' : 'Off']));
  let byPhase: Record<string, number> = {};
  for (const deadline = t0 + 900_000; ; ) {
    const live = await listObjects('crownlabs.polito.it/v1alpha2', 'Instance');
    byPhase = {};
    let done = 0;
    for (const i of live) {
      const want = wanted.get(`${i.metadata.namespace}/${i.metadata.name}`);
      if (!want) continue;
      const phase = (i.status as { phase?: string } | undefined)?.phase ?? '(none)';
      byPhase[phase] = (byPhase[phase] ?? 0) + 1;
      if (phase === want) done++;
    }
    if (done === wanted.size) break;
    if (Date.now() > deadline) throw new Error(`timed out waiting for every Instance Ready/Off: ${JSON.stringify(byPhase)}`);
    await sleep(1000);
  }
  const readyMs = Date.now() - t0;
  const running = [...wanted.values()].filter((w) => w === 'Ready').length;
  const pods = (await listObjects('v1', 'Pod')).filter((p) => p.metadata.namespace?.startsWith('tenant-')).length;
  log(`ready: ${running} Ready + ${wanted.size - running} Off after ${readyMs} ms; ${pods} pods`);
  rows.push(
    `| the burst's Instances running on kwok's simulated nodes | every running Instance **Ready** (${running}; the ${wanted.size - running} stopped ones Off) **${(readyMs / 1000).toFixed(1)} s** after the burst began (${pods} pods Ready on ${process.env.TEST_CLUSTER_NODES ?? 4} fake Nodes, VMs and DataVolumes driven by kwok's Stages); load ${loadavg()} |`,
  );
  writeResults();

  // 2. Steady-state resync of the converged lab.
  const s2 = await until(child, (s) => s.idle, 300_000, 'a quiet controller');
  const r = await ask<{ ms: number; stats: Stats }>(child, 'resync');
  const resync = { parents: FIRST + TENANTS + WORKSPACES, ms: r.ms, writes: r.stats.writes - s2.writes, requests: r.stats.requests - s2.requests, load: loadavg() };
  log(`resync: ${JSON.stringify(resync)}`);
  rows.push(`| steady-state resync of ${resync.parents} parents | **${resync.writes} writes** (target 0), ${resync.requests} requests, ${(resync.ms / 1000).toFixed(1)} s; load ${resync.load} |`);
  writeResults();

  // 3. TOTAL Instances in the caches: the rest are loaded into namespaces outside the namespace
  // whitelist, so the controller lists and caches them without reconciling (no children).
  const extra = instances.slice(FIRST).map((o) => ({ ...o, metadata: { ...o.metadata, namespace: `cache-${o.metadata.namespace}` } }));
  await createAll([...new Set(extra.map((o) => o.metadata.namespace!))].map((name) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } })));
  const t2 = Date.now();
  await createAll(extra);
  await until(child, (s) => s.instances >= TOTAL && s.idle, 900_000, `${TOTAL} instances in the caches`);
  const totalMs = Date.now() - t2;
  await sleep(2000);
  const g = (await ask(child, 'gc-stats')).stats;
  const big = { instances: g.instances, cachedObjects: g.cachedObjects, rssAfterGcMb: g.rssMb, heapMb: g.heapMb, heapTotalMb: g.heapTotalMb, externalMb: g.externalMb, peakRssMb: g.peakRssMb, load: loadavg() };
  log(`${TOTAL}: ${JSON.stringify(big)}`);
  rows.push(
    `| ${g.instances} Instances in the caches (${FIRST} reconciled with their children, ${TOTAL - FIRST} more loaded in ${(totalMs / 1000).toFixed(1)} s into non-whitelisted namespaces: listed and cached, not reconciled) | ${big.cachedObjects} cached objects; RSS **${big.rssAfterGcMb} MB** after GC (heap ${big.heapMb} MB); peak RSS of the whole run **${big.peakRssMb} MB** (target ≤ 300 MB at 5k); load ${big.load} |`,
  );
  complete = true;
  writeResults();

  log('bench/RESULTS.md updated');
} finally {
  if (child && child.exitCode === null) {
    child.send({ type: 'stop' });
    await new Promise((r) => child!.once('exit', r));
  }
  if (!process.env.BENCH_KEEP_CLUSTER) execFileSync(TEST_CLUSTER_SCRIPT, ['stop'], { env, stdio: 'inherit' });
}

/** Replaces this bench's section of bench/RESULTS.md (npm run bench keeps it), after every phase. */
function writeResults(): void {
  const section = `<!-- bench:controller:start -->
## Apply-controller on the test cluster (\`npm run bench:controller\`)

Written by bench/controller.ts: a real kube-apiserver + etcd (scripts/test-cluster) on the same
machine, the controller in its own process, client QPS **${QPS}** / burst **${BURST}**,
**${WORKERS}** workers (\`--max-concurrent-reconciles\`). Lab: generate-lab.ts (${WORKSPACES} workspaces,
${TENANTS} tenants, 7 template flavours: VMs, persistent VMs, CloudVMs, containers, standalone, exam;
one Instance in five stopped; workspace quotas raised so that every tenant's quota admits its
Instances). kube-controller-manager, kube-scheduler and kwok run beside the API server: "applied"
means every child is accepted by the API server and the Instance's status is written; "Ready" that
kwok's Stages ran the pods, VMs and DataVolumes and the controller reported the Instance Ready.

- date: ${new Date().toISOString()}${complete ? '' : ' (run incomplete: the rows below are the phases that finished)'}
- machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version};
  load average (the API server and etcd share these cores) at start ${loadStart}, when written ${loadavg()}

| measurement | result |
|---|---|
${rows.join('\n')}

"heap" is the V8 heap in use after a forced GC (the caches themselves); RSS also counts what V8
keeps mapped after the burst's garbage and the loaded code, so it is the number the ≤ 300 MB target
is checked against.
<!-- bench:controller:end -->
`;
  const file = join(ROOT, 'bench', 'RESULTS.md');
  const text = readFileSync(file, 'utf8');
  const re = /<!-- bench:controller:start -->[\s\S]*?<!-- bench:controller:end -->\n?/;
  writeFileSync(file, re.test(text) ? text.replace(re, section) : `${text.trimEnd()}\n\n${section}`);
}
