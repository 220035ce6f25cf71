// Status writes of the Instance reconciler against the real test cluster (#16): one write per real
// status change, never `phase: ""`, no empty url/ip, and every child applied once (the apply's
// answer stands in for the cache until the watch brings it); a child's status change takes the
// status-only path.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, type WatchHandle } from '../../src/kube/client.ts';
import { adminKubeConfig, getObject, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, lab, labConfig, patch, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('csw');
const full: Lab = lab(shard);
// Only the ephemeral Container environment (`desk`): its Template and Instance.
const l: Lab = { ...full, inputs: { ...full.inputs, namespaced: full.inputs.namespaced.filter((o) => o.metadata.name.startsWith('desk')) } };
const config = labConfig(shard);
let ctl: RunningController;
let watch: WatchHandle | undefined;
/** Every status the Instance's watch events showed, in order. */
const seen: Record<string, unknown>[] = [];

const inst = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'desk-1', namespace: l.tenantNs } };
const getInst = () => getObject<any>(inst);
const statusPath = `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/desk-1/status`;
const statusWrites = () => ctl.requests.filter((r) => r.method === 'PATCH' && r.path === statusPath);
const childPaths = [
  `/apis/apps/v1/namespaces/${l.tenantNs}/deployments/desk-1`,
  `/api/v1/namespaces/${l.tenantNs}/services/desk-1`,
  `/apis/networking.k8s.io/v1/namespaces/${l.tenantNs}/ingresses/desk-1-gui`,
];

beforeAll(async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config);
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  // Record every state of the Instance the API server sends, from before its creation.
  const client = new KubeClient(adminKubeConfig());
  const list = await client.request<{ metadata: { resourceVersion: string } }>('GET', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances`);
  watch = client.watch(
    `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances`,
    { resourceVersion: list.metadata.resourceVersion },
    (e) => {
      if (e.type !== 'BOOKMARK') seen.push(structuredClone((e.object as KubeObject & { status?: Record<string, unknown> }).status ?? {}));
    },
    () => undefined,
  );
  for (const o of l.inputs.namespaced) await create(o);
});

afterAll(async () => {
  watch?.stop();
  await ctl?.handle.stop();
  await cleanupLab(l);
});

describe('controller: Instance status writes', () => {
  it('a new container Instance gets one status write per real change: Starting, then Ready; never phase "" or an empty url/ip', async () => {
    // kwok makes the pod Ready, so the phases are the real ones: Starting (the Deployment just
    // applied), then Ready (its pod ready), each written once.
    await waitFor(async () => (await getInst())?.status?.phase === 'Ready', { message: 'desk-1 Ready' });
    await ctl.handle.idle(1000);
    const s = (await getInst()).status;
    const svc = await getObject<any>({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    expect(s).toEqual({ phase: 'Ready', url: expect.stringMatching(/^https:\/\/crownlabs\.test\/instance\/[0-9a-f-]+\/app\/$/), ip: svc.spec.clusterIP, initialReadyTime: expect.any(String) });
    expect(statusWrites()).toHaveLength(2);
    // Ready came from the Deployment's status alone: the status-only path wrote it, composing nothing.
    expect((await ctl.handle.metrics.statusOnlyReconciles.get()).values[0]?.value).toBeGreaterThanOrEqual(1);
    // Every child was applied once: the reconciles that followed read the apply's answers.
    for (const p of childPaths) expect(ctl.requests.filter((r) => r.method === 'PATCH' && r.path === p), p).toHaveLength(1);
    await waitFor(() => seen.some((st) => st.phase === 'Ready'), { message: 'the watch saw Ready' });
    for (const st of seen) {
      expect(st.phase === undefined || (typeof st.phase === 'string' && st.phase !== '')).toBe(true);
      expect(st.ip).not.toBe('');
      expect(st.url).not.toBe('');
    }
    expect([...new Set(seen.map((st) => st.phase))]).toEqual([undefined, 'Starting', 'Ready']);
  });

  it('a stop is one status write: Off, with url and ip removed (not written empty)', async () => {
    const before = statusWrites().length;
    const from = seen.length;
    await patch(inst, { spec: { running: false } });
    await waitFor(async () => (await getInst()).status.phase === 'Off', { message: 'desk-1 Off' });
    await ctl.handle.idle(1000);
    expect((await getInst()).status).toEqual({ phase: 'Off', initialReadyTime: expect.any(String) });
    expect(statusWrites().length - before).toBe(1);
    await waitFor(() => seen.slice(from).some((st) => st.phase === 'Off'), { message: 'the watch saw Off' });
    for (const st of seen.slice(from)) {
      expect(st.ip).not.toBe('');
      expect(st.url).not.toBe('');
    }
  });

  it('a resync of the unchanged Instance writes no status', async () => {
    const before = statusWrites().length;
    ctl.handle.resyncAll();
    await ctl.handle.idle();
    expect(statusWrites().length).toBe(before);
  });
});
