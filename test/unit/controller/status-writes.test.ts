// Status patches that leave empty fields out, and the informer's read-your-writes overlay that
// keeps a reconcile running right after our own write from repeating it (#16).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { statusPatch } from '../../../src/controller/apply-set.ts';
import { Informer, newerResourceVersion, PENDING_WRITE_TTL_MS, type CachedObject } from '../../../src/kube/informer.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { deploymentPhase } from '../../../src/model/phase.ts';

describe('statusPatch', () => {
  it('leaves an empty phase, url and ip out of a first status (no `phase: ""`)', () => {
    expect(statusPatch({ phase: undefined, url: 'https://x/instance/u/app/', ip: undefined }, undefined)).toEqual({ url: 'https://x/instance/u/app/' });
    expect(statusPatch({ phase: 'Starting', url: undefined, ip: '10.0.0.7' }, {})).toEqual({ phase: 'Starting', ip: '10.0.0.7' });
  });

  it('removes a field that became empty with null, as a merge patch of omitempty fields does', () => {
    expect(statusPatch({ phase: 'Off', url: undefined, ip: undefined }, { phase: 'Ready', url: 'https://x/', ip: '10.0.0.7', initialReadyTime: '5s' })).toEqual({
      phase: 'Off',
      url: null,
      ip: null,
    });
  });

  it('sends nothing when the status already holds it; an old empty string counts as absent', () => {
    expect(statusPatch({ phase: 'Starting', url: 'u', ip: undefined }, { phase: 'Starting', url: 'u' })).toBeUndefined();
    expect(statusPatch({ phase: undefined, url: undefined, ip: undefined }, { phase: '', url: '', ip: '' })).toBeUndefined();
    expect(statusPatch({ phase: 'Starting', ip: undefined }, { phase: '', ip: '' })).toEqual({ phase: 'Starting' });
  });

  it('patches nested objects field by field and lists as a whole; explicit empty strings are values', () => {
    const current = { automation: { lastCheckTime: 't1', terminationTime: 't9' }, failingWorkspaces: ['a'], personalNamespace: { name: 'tenant-a', created: true } };
    expect(statusPatch({ automation: { lastCheckTime: 't2' } }, current)).toEqual({ automation: { lastCheckTime: 't2' } });
    expect(statusPatch({ automation: { lastCheckTime: 't1' }, failingWorkspaces: ['a'] }, current)).toBeUndefined();
    expect(statusPatch({ failingWorkspaces: [] }, current)).toEqual({ failingWorkspaces: [] });
    expect(statusPatch({ personalNamespace: { name: '', created: false } }, current)).toEqual({ personalNamespace: { name: '', created: false } });
    expect(statusPatch({ personalNamespace: { name: '', created: false } }, {})).toEqual({ personalNamespace: { name: '', created: false } });
    expect(statusPatch({ automation: { submissionTime: 't3', terminationTime: undefined } }, {})).toEqual({ automation: { submissionTime: 't3' } });
  });
});

describe('phase of a Deployment right after its creation', () => {
  it('is Starting from the create answer (spec.replicas 1, no status yet), "" only without any object', () => {
    expect(deploymentPhase({ spec: { replicas: 1 }, status: {} }, true, false)).toBe('Starting');
    expect(deploymentPhase(undefined, true, false)).toBe('');
  });
});

/** A client whose list answers `items` and whose watch hands its event callback to the test. */
function fakeClient(items: CachedObject[] = []) {
  const watch: { onEvent?: (e: { type: string; object: any }) => void; onEnd?: (err?: Error) => void } = {};
  const client = {
    path: () => '/apis/apps/v1/deployments',
    request: async () => ({ metadata: { resourceVersion: '10' }, items: structuredClone(items) }),
    watch: (_p: string, _q: unknown, onEvent: (e: { type: string; object: any }) => void, onEnd: (err?: Error) => void) => {
      watch.onEvent = onEvent;
      watch.onEnd = onEnd;
      return { stop: () => undefined };
    },
  } as unknown as KubeClient;
  return { client, watch };
}

const dep = (name: string, rv: string, extra: Record<string, unknown> = {}): CachedObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'ns', resourceVersion: rv, labels: { managed: 'yes', 'composer.crownlabs.polito.it/parent-id': 'p1' } },
  ...extra,
});

async function started(items: CachedObject[] = []) {
  const { client, watch } = fakeClient(items);
  const inf = new Informer(client, { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: 'managed=yes' });
  const events: { type: string; rv?: string; own: boolean }[] = [];
  inf.on((type, obj, _old, own) => events.push({ type, rv: obj.metadata.resourceVersion, own }));
  inf.start();
  await inf.synced;
  events.length = 0;
  return { inf, watch, events };
}

describe('informer: read-your-writes', () => {
  afterEach(() => vi.useRealTimers());

  it('returns the answer to our write until the watch brings it; its echo is marked own and clears it', async () => {
    const { inf, watch, events } = await started();
    const answer = { ...dep('a', '11', { status: {} }), metadata: { ...dep('a', '11').metadata, managedFields: [{ manager: 'x' }] } };
    inf.noteWritten(answer);
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('11');
    expect(inf.get('ns', 'a')?.metadata.managedFields).toBeUndefined();
    expect(inf.store.has('ns/a')).toBe(false);
    watch.onEvent!({ type: 'ADDED', object: dep('a', '11') });
    expect(events).toEqual([{ type: 'add', rv: '11', own: true }]);
    // Someone else's later change is not ours.
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '12') });
    expect(events[1]).toEqual({ type: 'update', rv: '12', own: false });
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('12');
  });

  it('an event of someone else before our echo drops the answer: the cache is read again', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    inf.noteWritten(dep('a', '11'));
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '9') });
    expect(events).toEqual([{ type: 'update', rv: '9', own: false }]);
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('9');
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '11') });
    expect(events[1].own).toBe(false);
  });

  it('two writes before any echo: the first echo is own and keeps the second answer', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    inf.noteWritten(dep('a', '11'));
    inf.noteWritten(dep('a', '12'));
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '11') });
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('12');
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '12') });
    expect(events.map((e) => e.own)).toEqual([true, true]);
  });

  it('an answer read after the watch brought later versions is stale: the newer cache is kept (#15)', async () => {
    // A MyDrive PVC: created by our apply (rv 11), then bound by kube-controller-manager (12, 13),
    // all three watch events handled before the apply's answer. No event is due any more.
    const { inf, watch, events } = await started();
    watch.onEvent!({ type: 'ADDED', object: dep('a', '11') });
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '12') });
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '13', { status: { phase: 'Bound' } }) });
    inf.noteWritten(dep('a', '11'));
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('13');
    expect(inf.get('ns', 'a')?.status).toEqual({ phase: 'Bound' });
    expect(events.map((e) => e.own)).toEqual([false, false, false]);
    // A later write of ours is still read back before its echo.
    inf.noteWritten(dep('a', '14'));
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('14');
  });

  it('resourceVersions are compared only as etcd revisions (decimal integers)', () => {
    expect(newerResourceVersion('13', '11')).toBe(true);
    expect(newerResourceVersion('100', '99')).toBe(true);
    expect(newerResourceVersion('11', '11')).toBe(false);
    expect(newerResourceVersion('9', '11')).toBe(false);
    expect(newerResourceVersion('b', 'a')).toBe(false);
    expect(newerResourceVersion('12', '')).toBe(false);
  });

  it('a no-op write (the cached resourceVersion) leaves nothing pending', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    inf.noteWritten(dep('a', '5'));
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '6') });
    expect(events).toEqual([{ type: 'update', rv: '6', own: false }]);
  });

  it('a deletion of ours hides the object (get, byParentId) until its DELETED event, which is own', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    expect(inf.byParentId('p1')).toHaveLength(1);
    inf.noteDeleted('ns', 'a');
    expect(inf.get('ns', 'a')).toBeUndefined();
    expect(inf.byParentId('p1')).toEqual([]);
    watch.onEvent!({ type: 'DELETED', object: dep('a', '7') });
    expect(events).toEqual([{ type: 'delete', rv: '7', own: true }]);
  });

  it('an object outside the selector is never noted', async () => {
    const { inf } = await started();
    inf.noteWritten({ ...dep('b', '11'), metadata: { name: 'b', namespace: 'ns', resourceVersion: '11', labels: {} } });
    expect(inf.get('ns', 'b')).toBeUndefined();
  });

  it('a re-list forgets every pending answer: its events are never own', async () => {
    const { inf, watch, events } = await started();
    inf.noteWritten(dep('a', '11'));
    watch.onEvent!({ type: 'ERROR', object: { code: 410, message: 'gone' } });
    await vi.waitFor(() => expect(inf.lists).toBe(2));
    expect(inf.get('ns', 'a')).toBeUndefined();
    watch.onEvent!({ type: 'ADDED', object: dep('a', '11') });
    expect(events).toEqual([{ type: 'add', rv: '11', own: false }]);
  });

  it('write: an echo that comes before the answer is held, then handed over as own', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    let answer!: (o: CachedObject) => void;
    const written = inf.write('ns', 'a', () => new Promise<CachedObject>((r) => (answer = r)));
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '11') });
    // In the cache at once; its handlers wait for the answer.
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('11');
    expect(events).toEqual([]);
    // Someone else's change after ours, still before the answer: held too, in order, not own.
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '12') });
    answer(dep('a', '11'));
    expect((await written).metadata.resourceVersion).toBe('11');
    expect(events).toEqual([
      { type: 'update', rv: '11', own: true },
      { type: 'update', rv: '12', own: false },
    ]);
    // Nothing is left pending: the newer cache is read, later events go straight through.
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('12');
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '13') });
    expect(events[2]).toEqual({ type: 'update', rv: '13', own: false });
  });

  it('write: the answer first, then the echo: own as with noteWritten; other objects are never held', async () => {
    const { inf, watch, events } = await started([dep('a', '5'), dep('b', '6')]);
    let answer!: (o: CachedObject) => void;
    const written = inf.write('ns', 'a', () => new Promise<CachedObject>((r) => (answer = r)));
    watch.onEvent!({ type: 'MODIFIED', object: dep('b', '10') });
    expect(events).toEqual([{ type: 'update', rv: '10', own: false }]);
    answer(dep('a', '11'));
    await written;
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('11');
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '11') });
    expect(events[1]).toEqual({ type: 'update', rv: '11', own: true });
  });

  it('write: a failed write hands the held events over as they are', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    let fail!: (e: Error) => void;
    const written = inf.write('ns', 'a', () => new Promise<CachedObject>((_r, j) => (fail = j)));
    watch.onEvent!({ type: 'DELETED', object: dep('a', '9') });
    expect(events).toEqual([]);
    fail(new Error('conflict'));
    await expect(written).rejects.toThrow('conflict');
    expect(events).toEqual([{ type: 'delete', rv: '9', own: false }]);
    expect(inf.get('ns', 'a')).toBeUndefined();
  });

  it('write: a re-list while the write is in flight drops the held events (the list is newer) and hands over its own at once', async () => {
    const { inf, watch, events } = await started([dep('a', '5')]);
    let answer!: (o: CachedObject) => void;
    const written = inf.write('ns', 'a', () => new Promise<CachedObject>((r) => (answer = r)));
    watch.onEvent!({ type: 'MODIFIED', object: dep('a', '6') });
    watch.onEvent!({ type: 'ERROR', object: { code: 410, message: 'gone' } });
    // The re-list answers the items the fake client was started with (rv 5).
    await vi.waitFor(() => expect(inf.lists).toBe(2));
    expect(events).toEqual([{ type: 'update', rv: '5', own: false }]);
    answer(dep('a', '7'));
    await written;
    expect(events).toHaveLength(1);
  });

  it('an answer whose echo never comes stands in only for a while', async () => {
    vi.useFakeTimers();
    const { inf } = await started([dep('a', '5')]);
    inf.noteWritten(dep('a', '11'));
    vi.advanceTimersByTime(PENDING_WRITE_TTL_MS - 1);
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('11');
    vi.advanceTimersByTime(2);
    expect(inf.get('ns', 'a')?.metadata.resourceVersion).toBe('5');
  });
});
