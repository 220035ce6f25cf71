// The InstanceSnapshot controller (docs/behaviour.md §9) against the real test cluster: kube-controller-manager's
// Job controller runs the snapshot Job, whose pod kwok runs on a fake Node (it completes it, or
// crashes it when the Job's args carry "kwok-fail", or keeps it running with "kwok-hold"); the test
// checks the snapshot's phases and Events.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compose, renderUnit } from '../../src/compose/compose.ts';
import { withOwner } from '../../src/controller/apply-set.ts';
import { goDuration } from '../../src/model/duration.ts';
import { snapshotTag } from '../../src/model/snapshot.ts';
import { getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, inventoryFromCluster, lab, labConfig, patch, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('snp');
const l: Lab = lab(shard);
const config = labConfig(shard, { vmRegistry: 'registry.crownlabs.test:5000', vmRegistrySecret: 'registry-push' });
// The controller's clock (the image tag comes from it); close to real time for the Tenants' keep-alive.
let nowMs = Math.floor(Date.now() / 1000) * 1000;
let ctl: RunningController;
/** Every phase the controller's cache saw, by snapshot name. */
const phases = new Map<string, string[]>();

const SNAP = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'InstanceSnapshot' };
const snapRef = (name: string) => ({ ...SNAP, metadata: { name, namespace: l.tenantNs } });
const jobRef = (name: string) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: l.tenantNs } });
const getSnap = (name: string) => getObject<any>(snapRef(name));
const getJob = (name: string) => getObject<any>(jobRef(name));
const phaseOf = async (name: string) => (await getSnap(name))?.status?.phase;

function snapshot(name: string, instance: string, imageName = `${name}-img`): KubeObject {
  return { ...SNAP, metadata: { name, namespace: l.tenantNs }, spec: { instanceRef: { name: instance, namespace: l.tenantNs }, imageName } } as KubeObject;
}

async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await rest().request('GET', `/api/v1/namespaces/${l.tenantNs}/events`, { query: { fieldSelector: `involvedObject.name=${name},involvedObject.kind=InstanceSnapshot` } });
  return list.items.map((e: any) => ({ type: e.type, reason: e.reason, message: e.message }));
}

beforeAll(async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config, { now: () => nowMs });
  ctl.handle.caches.snapshots.on((_t, obj) => {
    const list = phases.get(obj.metadata.name) ?? [];
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (phase && list[list.length - 1] !== phase) list.push(phase);
    phases.set(obj.metadata.name, list);
  });
  await waitFor(async () => await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } }), { timeoutMs: 30_000, message: 'tenant namespace' });
  await waitFor(async () => await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } }), { timeoutMs: 30_000, message: 'workspace namespace' });
  // pvm-1 (persistent VirtualMachine) is stopped: the one instance that can be snapshotted.
  for (const o of l.inputs.namespaced) await create(o.metadata.name === 'pvm-1' ? { ...o, spec: { ...(o as any).spec, running: false } } : o);
  await ctl.handle.idle();
});

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
});

describe('§9.2 a valid request: Pending → Processing → Completed', () => {
  it('creates the Job compose renders, owned by the snapshot, with the tag of the controller clock', async () => {
    await create(snapshot('snap-ok', 'pvm-1', 'my-vm'));
    await waitFor(async () => (await phaseOf('snap-ok')) === 'Processing', { message: 'snap-ok Processing' });
    await waitFor(async () => (await eventsOf('snap-ok')).some((e) => e.reason === 'Creation'), { message: 'Creation event' });
    // kwok may already have finished the Job: Completed can follow.
    expect(phases.get('snap-ok')!.slice(0, 2)).toEqual(['Pending', 'Processing']);
    const live = await getSnap('snap-ok');
    const job = await getJob('snap-ok');
    expect(job.metadata.ownerReferences).toEqual([{ apiVersion: SNAP.apiVersion, kind: 'InstanceSnapshot', name: 'snap-ok', uid: live.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(job.spec.backoffLimit).toBe(2);
    const pod = job.spec.template.spec;
    expect(pod.restartPolicy).toBe('OnFailure');
    expect(pod.volumes).toEqual([
      { name: 'pvm-1', persistentVolumeClaim: { claimName: 'pvm-1' } },
      { name: 'tmp-vol', emptyDir: {} },
      { name: 'kaniko-secret', secret: { secretName: 'registry-push', items: [{ key: '.dockerconfigjson', path: 'config.json' }], defaultMode: 420 } },
    ]);
    const imagedir = l.tenants[0].toLowerCase().replace(/[^a-z0-9]/g, '');
    expect(pod.containers[0].args).toEqual(['--dockerfile=/workspace/Dockerfile', `--destination=registry.crownlabs.test:5000/${imagedir}/my-vm:${snapshotTag(new Date(nowMs))}`]);
    expect(pod.initContainers.map((c: any) => c.name)).toEqual(['img-generator']);

    // One composition: every field compose renders for the same inputs (and that tag) is live as rendered.
    const inventory = await inventoryFromCluster(l);
    inventory.upsert(live as never, { file: 'cluster', document: 1 });
    const composition = compose(inventory, config, { only: (p) => p.kind === 'InstanceSnapshot' && p.name === 'snap-ok', snapshotTag: () => snapshotTag(new Date(nowMs)) });
    const [rendered] = withOwner(renderUnit(composition.units[0]), live);
    expect(differences(rendered, job, 'Job')).toEqual([]);

    const events = (await eventsOf('snap-ok')).filter((e) => e.reason !== 'Created');
    expect(events).toEqual(
      expect.arrayContaining([
        { type: 'Normal', reason: 'Validating', message: 'Start validation of the request' },
        { type: 'Normal', reason: 'Creation', message: 'Job snap-ok for snapshot creation started' },
      ]),
    );
    expect(events).toHaveLength(2);
  });

  it('the Job completes (its pod ran on a fake Node): Completed, with a Created event stating the Job\'s duration', async () => {
    await waitFor(async () => (await phaseOf('snap-ok')) === 'Completed', { message: 'snap-ok Completed' });
    await waitFor(async () => (await eventsOf('snap-ok')).some((e) => e.reason === 'Created'), { message: 'Created event' });
    expect(phases.get('snap-ok')).toEqual(['Pending', 'Processing', 'Completed']);
    // Start and completion time are the Job controller's.
    const job = await getJob('snap-ok');
    expect(job.status.conditions).toContainEqual(expect.objectContaining({ type: 'Complete', status: 'True' }));
    expect(job.status.succeeded).toBe(1);
    const took = goDuration(Date.parse(job.status.completionTime) - Date.parse(job.status.startTime));
    expect((await eventsOf('snap-ok')).filter((e) => e.reason === 'Created')).toEqual([{ type: 'Normal', reason: 'Created', message: `Image my-vm created and uploaded in ${took}` }]);
  });
});

describe('§9.2 a failed Job', () => {
  it('makes the snapshot Failed with a CreationFailed warning', async () => {
    // The image name reaches the pusher's --destination: kwok crashes that container, and the Job
    // controller fails the Job once the restarts reach its backoffLimit.
    await create(snapshot('snap-fail', 'pvm-1', 'kwok-fail'));
    await waitFor(async () => (await phaseOf('snap-fail')) === 'Failed', { timeoutMs: 60_000, message: 'snap-fail Failed' });
    expect(phases.get('snap-fail')).toEqual(['Pending', 'Processing', 'Failed']);
    const job = await getJob('snap-fail');
    expect(job.status.conditions).toContainEqual(expect.objectContaining({ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }));
    await waitFor(async () => (await eventsOf('snap-fail')).some((e) => e.reason === 'CreationFailed'), { message: 'CreationFailed event' });
    expect((await eventsOf('snap-fail')).filter((e) => e.type === 'Warning')).toEqual([{ type: 'Warning', reason: 'CreationFailed', message: 'The creation job failed' }]);
  });
});

describe('§9.2 bad requests fail permanently, with a ValidationError, and nothing else is affected', () => {
  const cases = [
    ['of a non-persistent instance', 'snap-ephemeral', 'vm-1', /environment vm is not persistent/],
    ['of a running instance', 'snap-running', 'cloud-1', /is running: stop it before taking a snapshot/],
    ['of a missing instance', 'snap-missing', 'nope-1', new RegExp(`Instance ${l.tenantNs}/nope-1 not found`)],
  ] as const;

  beforeAll(async () => {
    // The bad requests arrive together with a good one.
    for (const [, name, instance] of cases) await create(snapshot(name, instance));
    // Its pod keeps running (kwok-hold): the Job is still active for the steady-state test below.
    await create(snapshot('snap-good', 'pvm-1', 'kwok-hold'));
    await waitFor(async () => (await Promise.all(cases.map(([, n]) => phaseOf(n)))).every((p) => p === 'Failed'), { message: 'bad snapshots Failed' });
    await waitFor(async () => (await phaseOf('snap-good')) === 'Processing', { message: 'snap-good Processing' });
    await ctl.handle.idle();
  });

  it.each(cases)('a snapshot %s: Failed, ValidationError with the reason, no Job', async (_what, name, _instance, message) => {
    expect(phases.get(name)).toEqual(['Pending', 'Failed']);
    const warnings = (await eventsOf(name)).filter((e) => e.type === 'Warning');
    expect(warnings).toHaveLength(1);
    expect(warnings[0].reason).toBe('ValidationError');
    expect(warnings[0].message).toMatch(message);
    expect(await getJob(name)).toBeUndefined();
  });

  it('the controller keeps running: the good request next to them got its Job', async () => {
    expect(await getJob('snap-good')).toBeDefined();
    expect((await ctl.handle.metrics.reconciles.get()).values.filter((v) => v.labels.kind === 'InstanceSnapshot' && v.labels.result === 'error')).toEqual([]);
  });
});

describe('§0.6 namespace whitelist', () => {
  it('a snapshot in a namespace without the whitelist labels is left alone', async () => {
    const other = `${shard}-other`;
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: other } });
    await create({ ...snapshot('snap-elsewhere', 'pvm-1'), metadata: { name: 'snap-elsewhere', namespace: other } });
    await waitFor(() => ctl.handle.caches.snapshots.get(other, 'snap-elsewhere'), { message: 'snapshot cached' });
    await ctl.handle.idle();
    expect((await getObject<any>({ ...SNAP, metadata: { name: 'snap-elsewhere', namespace: other } }))?.status).toBeUndefined();
    expect(await getObject({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'snap-elsewhere', namespace: other } })).toBeUndefined();
    await rest().request('DELETE', `/api/v1/namespaces/${other}`);
  });
});

describe('§9.1 steady state', () => {
  it('a resync of finished and running snapshots sends zero writes, and a later clock does not touch the running Job', async () => {
    await ctl.handle.idle();
    const before = ctl.writes().length;
    const reconciledBefore = ctl.reconciled.length;
    const jobBefore = await getJob('snap-good');
    nowMs += 3600_000; // another tag, were the Job rendered again
    ctl.handle.resyncAll();
    await ctl.handle.idle();
    const snapshotsReconciled = ctl.reconciled.slice(reconciledBefore).filter((k) => k.startsWith(`InstanceSnapshot/${l.tenantNs}/`));
    expect(new Set(snapshotsReconciled)).toEqual(new Set(['snap-ok', 'snap-fail', 'snap-ephemeral', 'snap-running', 'snap-missing', 'snap-good'].map((n) => `InstanceSnapshot/${l.tenantNs}/${n}`)));
    expect(ctl.writes().slice(before)).toEqual([]);
    const jobAfter = await getJob('snap-good');
    expect(jobAfter.metadata.resourceVersion).toBe(jobBefore.metadata.resourceVersion);
    expect(await phaseOf('snap-good')).toBe('Processing');
  });

  it('an update that does not change the generation (labels, status) does not requeue the snapshot', async () => {
    await ctl.handle.idle();
    const reconciledBefore = ctl.reconciled.length;
    const updated = await patch(snapRef('snap-ok'), { metadata: { labels: { note: 'hand-edit' } } });
    await waitFor(() => ctl.handle.caches.snapshots.get(l.tenantNs, 'snap-ok')?.metadata.resourceVersion === updated.metadata.resourceVersion, { message: 'label seen by the cache' });
    await ctl.handle.idle();
    expect(ctl.reconciled.slice(reconciledBefore).filter((k) => k.endsWith('/snap-ok'))).toEqual([]);
  });
});

/** Fields of `rendered` whose live value differs (the API server only adds defaults). */
function differences(rendered: unknown, live: unknown, path: string): string[] {
  if (Array.isArray(rendered)) {
    if (!Array.isArray(live) || live.length !== rendered.length) return [`${path}: ${JSON.stringify(live)} != ${JSON.stringify(rendered)}`];
    return rendered.flatMap((r, i) => differences(r, live[i], `${path}[${i}]`));
  }
  if (rendered && typeof rendered === 'object') {
    if (!live || typeof live !== 'object') return [`${path}: missing`];
    return Object.entries(rendered).flatMap(([k, v]) => differences(v, (live as Record<string, unknown>)[k], `${path}.${k}`));
  }
  return rendered === live ? [] : [`${path}: ${JSON.stringify(live)} != ${JSON.stringify(rendered)}`];
}
