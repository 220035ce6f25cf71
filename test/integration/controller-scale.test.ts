// Convergence of a larger lab (every environment type, many Instances), every Instance Ready on
// kwok's simulated nodes, and the steady state after it: numbers printed for bench/RESULTS, zero
// writes asserted.
import { afterAll, expect, it } from 'vitest';
import { getObject, listObjects, waitFor } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, FLAVOURS, lab, labConfig, runController, shardName, withTenantQuota, type RunningController } from './controller-support.ts';

const INSTANCES = Number(process.env.CONTROLLER_SCALE_INSTANCES ?? 120);
const shard = shardName('cs');
// Room for every Instance and its pods (the quota is enforced).
const l = withTenantQuota(lab(shard), { cpu: INSTANCES * 2, memory: `${INSTANCES * 4}Gi`, instances: INSTANCES });
const config = labConfig(shard);
let ctl: RunningController | undefined;

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
});

it(`converges a lab of ${INSTANCES} instances, then resyncs with zero writes`, async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config, { maxConcurrentReconciles: 8 });
  await waitFor(async () => await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } }), { message: 'tenant namespace' });
  for (const o of l.inputs.namespaced.filter((o) => o.kind === 'Template')) await create(o);
  await ctl.handle.idle();
  const t0 = Date.now();
  const writes0 = ctl.writes().length;
  const instances = Array.from({ length: INSTANCES }, (_, i) => {
    const f = FLAVOURS[i % FLAVOURS.length];
    return {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: `${f.name}-s${i}`, namespace: l.tenantNs },
      spec: { running: true, 'template.crownlabs.polito.it/TemplateRef': { name: f.name, namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    };
  });
  await Promise.all(instances.map((o) => create(o)));
  await waitFor(
    async () => (await listObjects<any>('crownlabs.polito.it/v1alpha2', 'Instance', { namespace: l.tenantNs })).every((i) => i.status !== undefined),
    { timeoutMs: 120_000, intervalMs: 250, message: 'every instance has a status' },
  );
  await ctl.handle.idle();
  const convergeMs = Date.now() - t0;
  const convergeWrites = ctl.writes().length - writes0;
  // Then kwok runs the VMs and pods: every Instance Ready, and no child changes any more.
  let notReady: string[] = [];
  await waitFor(
    async () => {
      notReady = (await listObjects<any>('crownlabs.polito.it/v1alpha2', 'Instance', { namespace: l.tenantNs })).filter((i) => i.status?.phase !== 'Ready').map((i) => `${i.metadata.name}: ${i.status?.phase}`);
      return notReady.length === 0;
    },
    { timeoutMs: 300_000, intervalMs: 1000, message: 'every instance Ready' },
  ).catch((e) => {
    throw new Error(`${(e as Error).message}; not Ready: ${notReady.slice(0, 10).join(', ')}`);
  });
  const readyMs = Date.now() - t0;
  await ctl.handle.idle();

  const before = ctl.writes().length;
  const t1 = Date.now();
  ctl.handle.resyncAll();
  await ctl.handle.idle(100);
  const resyncMs = Date.now() - t1 - 100;
  const resyncWrites = ctl.writes().length - before;
  const latency = await ctl.handle.metrics.latency.get();
  const count = latency.values.filter((v) => v.metricName?.endsWith('_count')).reduce((a, v) => a + v.value, 0);
  const sum = latency.values.filter((v) => v.metricName?.endsWith('_sum')).reduce((a, v) => a + v.value, 0);
  console.log(
    `scale: ${INSTANCES} instances converged in ${convergeMs} ms with ${convergeWrites} writes, all Ready after ${readyMs} ms; ` +
      `full resync of ${INSTANCES + 3} parents in ~${resyncMs} ms with ${resyncWrites} writes; mean reconcile ${((sum / count) * 1000).toFixed(1)} ms over ${count}`,
  );
  expect(resyncWrites).toBe(0);
});
