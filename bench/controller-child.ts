// The apply-controller in its own process for bench/controller.ts (so its RSS is its own),
// counting every API request it sends; answers the parent's `stats`, `resync` and `stop` messages.
// The KubeConfig module alone, as src/runtime/bundle.mjs bundles it (not the package index).
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { pino } from 'pino';
import { defaultConfig } from '../src/config/config.ts';
import { startController } from '../src/controller/controller.ts';
import { applyHeapGrowth, HEAP_GROWING_PERCENT } from '../src/cli/heap-growth.ts';
import { Command } from 'commander';
import { addInactivityOptions, inactivityFromFlags } from '../src/cli/inactivity-flags.ts';

// The modules are loaded (a bundle's imports run before its first line): what they cost.
const importRssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
// As `crownlabs controller` does first (a BENCH_NODE_FLAGS value of the flag wins there too).
applyHeapGrowth(HEAP_GROWING_PERCENT.controller);
const [kubeconfig, qps, burst, workers] = process.argv.slice(2);
/** "default": the controller's own default. */
const flag = (v: string | undefined) => (v === undefined || v === 'default' ? undefined : Number(v));
const kubeConfig = new KubeConfig();
kubeConfig.loadFromFile(kubeconfig);
let requests = 0;
let writes = 0;
let reconciles = 0;
let failed = 0;
/** Reconciles by parent kind; `Instance status` counts the status-only path apart. */
const byKind: Record<string, number> = {};
/** Instances reconciled successfully at least once (children applied, status written if it changed). */
const reconciledInstances = new Set<string>();
// BENCH_INACTIVITY_PROMETHEUS (bench/inactivity.ts): the inactivity automation on, reading that
// Prometheus with upstream's queries, no mail; BENCH_INACTIVITY_REQUEUE the min/max refresh.
const prometheusUrl = process.env.BENCH_INACTIVITY_PROMETHEUS;
const startedAt = Math.floor(Date.now() / 1000) * 1000;
let prometheusRequests = 0;
if (prometheusUrl) {
  const fetchOf = globalThis.fetch;
  globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    if (String(input).startsWith(prometheusUrl)) prometheusRequests++;
    return fetchOf(input, init);
  }) as typeof fetch;
}
// The automation as `crownlabs controller` reads its flags: upstream's defaults, our tracker's container.
const inactivity = prometheusUrl
  ? inactivityFromFlags(
      addInactivityOptions(new Command())
        .parse(['--enable-instance-inactive-termination', '--monitoring-prometheus-url', prometheusUrl, '--monitoring-bastion-ssh-availability', 'count(up{container="ssh-tracker"})', ...(process.env.BENCH_INACTIVITY_REQUEUE ?? '1h,6h').split(',').flatMap((d, i) => [i ? '--max-last-activity-requeue-time' : '--min-last-activity-requeue-time', d])], { from: 'user' })
        .opts(),
    )
  : undefined;
const handle = await startController({
  kubeConfig,
  // BENCH_CONFIG: configuration keys over the defaults, as JSON.
  config: { ...defaultConfig(), mydriveNfsServerName: 'nfs.example', ...(JSON.parse(process.env.BENCH_CONFIG ?? '{}') as object) },
  metricsAddr: '',
  healthProbeAddr: '',
  maxConcurrentReconciles: Number(workers),
  clientQps: flag(qps),
  clientMaxBurst: flag(burst),
  logger: pino({ level: process.env.CONTROLLER_LOG ?? 'error' }),
  automation: { inactivity },
  onRequest: (r) => {
    requests++;
    if (r.method !== 'GET') writes++;
  },
  onReconcile: (key, outcome, statusOnly) => {
    reconciles++;
    const kind = `${key.slice(0, key.indexOf('/'))}${statusOnly ? ' status' : ''}`;
    byKind[kind] = (byKind[kind] ?? 0) + 1;
    if (outcome === 'error') failed++;
    else if (key.startsWith('Instance/')) reconciledInstances.add(key);
  },
});

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);
function stats() {
  const instances = handle.caches.instances.list();
  return {
    requests,
    writes,
    reconciles,
    byKind: { ...byKind },
    failed,
    instances: instances.length,
    // A VM has no phase without KubeVirt (none is written): a written status is any status.
    reconciledOk: reconciledInstances.size,
    withStatus: instances.filter((i) => i.status !== undefined).length,
    cachedObjects: handle.caches.all.reduce((a, inf) => a + inf.store.size, 0),
    idle: handle.queue.isIdle(),
    rssMb: mb(process.memoryUsage().rss),
    heapMb: mb(process.memoryUsage().heapUsed),
    heapTotalMb: mb(process.memoryUsage().heapTotal),
    externalMb: mb(process.memoryUsage().external),
    peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    prometheusRequests,
    /** Instances whose activity this process checked (the annotation it writes, at or after its start). */
    activityChecked: instances.filter((i) => Date.parse(i.metadata.annotations?.['crownlabs.polito.it/last-activity-check-timestamp'] ?? '') >= startedAt).length,
  };
}

process.on('message', (m: { type: string }) => {
  void (async () => {
    if (m.type === 'stats') process.send!({ type: 'stats', stats: stats() });
    else if (m.type === 'gc-stats') {
      (globalThis as { gc?: () => void }).gc?.();
      process.send!({ type: 'gc-stats', stats: stats() });
    } else if (m.type === 'resync') {
      const t0 = performance.now();
      handle.resyncAll();
      await handle.idle(50);
      process.send!({ type: 'resync', ms: Math.round(performance.now() - t0 - 50), stats: stats() });
    } else if (m.type === 'stop') {
      await handle.stop();
      process.exit(0);
    }
  })();
});
process.send!({ type: 'ready', importRssMb, rssMb: mb(process.memoryUsage().rss) });
