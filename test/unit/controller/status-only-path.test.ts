// The status-only path (#16): a child whose status alone changed asks its Instance for a light run
// (status derived again, nothing composed or applied); anything we render changing, a child
// appearing or going away, asks for the full reconcile; the work queue keeps a run full when any
// add since its last start was.
import { describe, expect, it } from 'vitest';
import { childEventRequest } from '../../../src/controller/child-events.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';
import { onlyStatusChanged, sameJson } from '../../../src/controller/live-compare.ts';
import { WorkQueue } from '../../../src/controller/work-queue.ts';

const PARENT = 'composer.crownlabs.polito.it/parent';
const scope = { guard: { mydrivePvcsNamespace: 'mydrive-pvcs' }, parentExists: () => true };

function deployment(rv: string, over: { spec?: object; status?: object; annotations?: Record<string, string>; labels?: Record<string, string>; generation?: number } = {}): CachedObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'desk-1',
      namespace: 'tenant-a',
      resourceVersion: rv,
      generation: over.generation ?? 1,
      labels: over.labels ?? { 'app.kubernetes.io/managed-by': 'crownlabs-composer' },
      annotations: { [PARENT]: 'Instance/tenant-a/desk-1', ...over.annotations },
      ownerReferences: [{ uid: 'u1', kind: 'Instance', name: 'desk-1', controller: true }],
    },
    spec: over.spec ?? { replicas: 1, template: { spec: { containers: [{ name: 'c', image: 'i' }] } } },
    status: over.status ?? {},
  };
}

describe('onlyStatusChanged', () => {
  it('status, resourceVersion, generation and server-written annotations are not ours', () => {
    const a = deployment('1');
    expect(onlyStatusChanged(deployment('2', { status: { readyReplicas: 1 } }), a)).toBe(true);
    expect(onlyStatusChanged(deployment('2', { annotations: { 'deployment.kubernetes.io/revision': '1' } }), a)).toBe(true);
  });
  it('a spec, label, annotation or owner change is', () => {
    const a = deployment('1');
    expect(onlyStatusChanged(deployment('2', { spec: { replicas: 2 } }), a)).toBe(false);
    expect(onlyStatusChanged(deployment('2', { labels: { x: 'y' } }), a)).toBe(false);
    expect(onlyStatusChanged(deployment('2', { annotations: { [PARENT]: 'Instance/tenant-a/other' } }), a)).toBe(false);
    expect(onlyStatusChanged(deployment('2', { annotations: { 'nginx.ingress.kubernetes.io/x': 'y' } }), a)).toBe(false);
    const orphaned = deployment('2');
    orphaned.metadata.ownerReferences = [];
    expect(onlyStatusChanged(orphaned, a)).toBe(false);
    const deleting = deployment('2');
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    expect(onlyStatusChanged(deleting, a)).toBe(false);
  });
  it('sameJson ignores key order, not values or list order', () => {
    expect(sameJson({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson(null, {})).toBe(false);
  });
});

describe('childEventRequest', () => {
  it('a status change of an Instance child: light; a spec change or a delete: full', () => {
    const a = deployment('1');
    expect(childEventRequest('update', deployment('2', { status: { readyReplicas: 1 } }), a, false, scope)).toEqual({ key: 'Instance/tenant-a/desk-1', light: true });
    expect(childEventRequest('update', deployment('2', { spec: { replicas: 0 } }), a, false, scope)).toEqual({ key: 'Instance/tenant-a/desk-1', light: false });
    expect(childEventRequest('delete', a, undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/desk-1', light: false });
  });
  it('an added child the Instance controls is our apply seen before its answer: light; one it does not control: full', () => {
    expect(childEventRequest('add', deployment('1'), undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/desk-1', light: true });
    const foreign = deployment('1');
    foreign.metadata.ownerReferences = [];
    expect(childEventRequest('add', foreign, undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/desk-1', light: false });
  });
  it('a claim bound by the PV controller (volumeName, binder and provisioner annotations) changed nothing we render', () => {
    const pvc = (rv: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): CachedObject => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'c', namespace: 'tenant-a', resourceVersion: rv, annotations: { [PARENT]: 'Instance/tenant-a/c', ...annotations } },
      spec,
    });
    const unbound = pvc('1', { resources: { requests: { storage: '1Gi' } } });
    const bound = pvc('2', { resources: { requests: { storage: '1Gi' } }, volumeName: 'pv-1' }, { 'pv.kubernetes.io/bind-completed': 'yes', 'volume.kubernetes.io/storage-provisioner': 'csi' });
    expect(onlyStatusChanged(bound, unbound)).toBe(true);
    expect(onlyStatusChanged(pvc('3', { resources: { requests: { storage: '2Gi' } }, volumeName: 'pv-1' }), unbound)).toBe(false);
    expect(onlyStatusChanged(pvc('3', { resources: { requests: { storage: '1Gi' } }, volumeName: 'pv-2' }), bound)).toBe(false);
  });
  it('the echo of our own write, or an event without a new resourceVersion, asks nothing', () => {
    expect(childEventRequest('update', deployment('2', { spec: { replicas: 0 } }), deployment('1'), true, scope)).toBeUndefined();
    expect(childEventRequest('update', deployment('1'), deployment('1'), false, scope)).toBeUndefined();
  });
  it('a status change of a Tenant child: nothing, but for a PVC (MyDrive bound); a Job of a snapshot: full', () => {
    const quota = (rv: string, used: string): CachedObject => ({
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'crownlabs-resource-quota', namespace: 'tenant-a', resourceVersion: rv, annotations: { [PARENT]: 'Tenant/a' } },
      spec: { hard: { pods: '10' } },
      status: { used: { pods: used } },
    });
    expect(childEventRequest('update', quota('2', '1'), quota('1', '0'), false, scope)).toBeUndefined();
    const pvc = (rv: string, phase: string): CachedObject => ({ ...quota(rv, '0'), kind: 'PersistentVolumeClaim', spec: {}, status: { phase } });
    expect(childEventRequest('update', pvc('2', 'Bound'), pvc('1', 'Pending'), false, scope)).toEqual({ key: 'Tenant/a', light: false });
    const job = (rv: string, succeeded: number): CachedObject => ({ ...quota(rv, '0'), kind: 'Job', metadata: { ...quota(rv, '0').metadata, namespace: 'ns', annotations: { [PARENT]: 'InstanceSnapshot/ns/s' } }, status: { succeeded } });
    expect(childEventRequest('update', job('2', 1), job('1', 0), false, scope)).toEqual({ key: 'InstanceSnapshot/ns/s', light: false });
  });
  it('a VMI KubeVirt made for a persistent VM maps by its instance label, and any event of it is light', () => {
    const vmi = (rv: string): CachedObject => ({
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: { name: 'vm-1', namespace: 'tenant-a', resourceVersion: rv, labels: { 'crownlabs.polito.it/instance': 'vm-1' }, ownerReferences: [{ uid: 'v', kind: 'VirtualMachine', name: 'vm-1', controller: true }] },
      spec: { domain: {} },
    });
    expect(childEventRequest('add', vmi('1'), undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/vm-1', light: true });
    expect(childEventRequest('delete', vmi('2'), undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/vm-1', light: true });
    // An ephemeral VM's VMI is ours (owned by the Instance): its spec and existence are full.
    const ours = { ...vmi('3'), metadata: { ...vmi('3').metadata, annotations: { [PARENT]: 'Instance/tenant-a/vm-1' }, ownerReferences: [{ uid: 'u', kind: 'Instance', name: 'vm-1', controller: true }] } };
    expect(childEventRequest('delete', ours, undefined, false, scope)).toEqual({ key: 'Instance/tenant-a/vm-1', light: false });
  });
});

describe('work queue: light runs', () => {
  /** A queue whose runs wait for `release()`, recording each run's key and lightness. */
  function gatedQueue() {
    const q = new WorkQueue({ workers: 1, baseDelayMs: 5 });
    const runs: [string, boolean][] = [];
    let release: () => void = () => undefined;
    let fail = false;
    q.run(
      async (key, light) => {
        runs.push([key, light]);
        await new Promise<void>((r) => (release = r));
        if (fail) {
          fail = false;
          throw new Error('boom');
        }
      },
      () => undefined,
    );
    return { q, runs, release: () => release(), failNext: () => (fail = true) };
  }
  const tick = (ms = 5) => new Promise((r) => setTimeout(r, ms));

  it('a run is light only when every add since its last start was light', async () => {
    const { q, runs, release } = gatedQueue();
    q.addLight('k');
    await tick();
    expect(runs).toEqual([['k', true]]);
    q.addLight('k'); // during the run: one more light run
    release();
    await tick();
    expect(runs[1]).toEqual(['k', true]);
    q.addLight('k');
    q.add('k'); // during the run: a full add makes the next run full
    q.addLight('k');
    release();
    await tick();
    expect(runs[2]).toEqual(['k', false]);
    release();
    await tick();
    expect(runs).toHaveLength(3);
    q.add('other');
    q.addLight('other'); // waiting: the full add is kept
    await tick();
    expect(runs[3]).toEqual(['other', false]);
    release();
    await q.stop();
  });

  it('the retry of a failed run is full', async () => {
    const { q, runs, release, failNext } = gatedQueue();
    failNext();
    q.addLight('k');
    await tick();
    release();
    await tick(40);
    expect(runs).toEqual([
      ['k', true],
      ['k', false],
    ]);
    release();
    await q.stop();
  });
});
