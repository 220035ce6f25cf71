/**
 * InstanceSnapshot reconciler (docs/behaviour.md §9.2): validate the request, create its Job once — the Job
 * compose renders for the snapshot, tagged with the controller's clock — and follow that Job to
 * Completed or Failed. Completed and Failed are final: a later reconcile (resync, restart) sends
 * nothing. The Job spec is written at creation only: its tag changes with time, so it is never
 * re-applied.
 *
 * Watches (wired by `watchSnapshots`): InstanceSnapshots (generation changes only, so our status
 * writes do not come back), Namespaces (whitelist), and the Jobs, which map to their snapshot by
 * the parent annotation like every rendered child (controller.ts).
 */
import { compose, renderUnit } from '../compose/compose.ts';
import { INPUT_KINDS, type Instance, type InstanceSnapshot } from '../inputs/types.ts';
import { instanceTemplateRef, snapshotConfigProblem, snapshotInstanceRef, SNAPSHOT_EVENTS, snapshotOutcome, snapshotTag, validateSnapshotRequest, type JobOutcome, type SnapshotEvent, type SnapshotLookup, type SnapshotPhase } from '../model/snapshot.ts';
import { withOwner } from './apply-set.ts';
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { ApiAccess } from '../kube/resources.ts';
import { isConflict, isNotFound } from '../kube/client.ts';
import { whitelisted } from './predicates.ts';
import { liveOrServer } from './live-lookup.ts';
import { failedValidation } from './terminal-error.ts';

const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;

/** Beyond the rendered Job (create) and the informers: a Job not in the cache is read from the server. */
export const SNAPSHOT_API_ACCESS: readonly ApiAccess[] = [
  { ...JOB, verbs: ['get', 'create'] },
  // An Instance or Template missing from the cache is looked up on the server before failing.
  { apiVersion: INPUT_KINDS.Instance.apiVersion, kind: 'Instance', verbs: ['get'] },
  { apiVersion: INPUT_KINDS.Template.apiVersion, kind: 'Template', verbs: ['get'] },
];

export async function reconcileSnapshot(ctx: ControllerContext, namespace: string, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.snapshots.get(namespace, name);
  if (!live || live.metadata.deletionTimestamp) return {}; // its Job is garbage-collected
  // docs/behaviour.md §0.6: outside the whitelisted namespaces, nothing happens.
  if (!whitelisted(ctx, namespace)) return {};
  const phase = (live.status as { phase?: string } | undefined)?.phase;
  if (phase === 'Completed' || phase === 'Failed') return {};
  const snapshot = ctx.caches.inventory.snapshots.get(`${namespace}/${name}`);
  if (!snapshot) throw failedValidation(ctx.caches, live);
  const record = (e: SnapshotEvent) => ctx.events.record(live, e.type, e.reason, e.message);
  const phases = new PhaseWriter(ctx, live);

  try {
    // The Job named after the snapshot (one not made by us is read from the server).
    const job = await liveOrServer(ctx, { ...JOB, metadata: { namespace, name } });
    if (job) {
      // A Job of a deleted snapshot of the same name waits for the garbage collector.
      if (!(job.metadata.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid)) {
        throw new Error(`Job ${namespace}/${name} exists and is not owned by this InstanceSnapshot`);
      }
      const outcome = snapshotOutcome(job as JobOutcome, snapshot.spec.imageName);
      // Still running: only make sure the phase says so (a create whose status write was lost).
      if (!outcome) {
        if (phase !== 'Processing') await phases.set('Processing');
        return {};
      }
      await phases.set(outcome.phase);
      await record(outcome.event);
      return {};
    }

    // Job missing (docs/behaviour.md §9.2 steps 1–4). Validating is announced once, not on every retry.
    if (phase !== 'Pending') {
      await phases.set('Pending');
      await record(SNAPSHOT_EVENTS.validating);
    }
    const configProblem = snapshotConfigProblem(ctx.config);
    if (configProblem) {
      await phases.set('Failed');
      await record(SNAPSHOT_EVENTS.validationError(configProblem));
      return {};
    }
    const request = validateSnapshotRequest(snapshot, cacheLookup(ctx.caches));
    if (!request.ok) {
      // An Instance created just before its snapshot (one `kubectl apply`) may not be cached yet.
      const transient = !request.permanent || (await onServerNotInCache(ctx, snapshot));
      if (transient) throw new Error(`InstanceSnapshot ${namespace}/${name}: ${request.message}${request.permanent ? ' in the cache yet' : ''}`);
      await phases.set('Failed');
      await record(SNAPSHOT_EVENTS.validationError(request.message));
      return {};
    }

    // One composition: the Job `crownlabs synth` renders for the same inputs, with the tag of now.
    const composition = compose(ctx.caches.inventory, ctx.config, {
      parent: { kind: 'InstanceSnapshot', namespace, name },
      snapshotTag: () => snapshotTag(new Date(ctx.now())),
    });
    const unit = composition.units[0];
    if (!unit) throw new Error(`InstanceSnapshot ${namespace}/${name}: ${composition.problems.map((p) => p.message).join('; ') || 'nothing to render'}`);
    const [rendered] = withOwner(renderUnit(unit), live);
    // Create, never apply: an existing Job (409) is read back on the retry, not replaced.
    await ctx.client.request('POST', ctx.client.path(JOB.apiVersion, JOB.kind, namespace), { body: rendered });
    ctx.metrics.applies.inc({ kind: JOB.kind });
    await phases.set('Processing');
    await record(SNAPSHOT_EVENTS.creation(name));
    return {};
  } catch (e) {
    // Our cache lagged behind the snapshot: look again once it has caught up.
    if (e instanceof StaleSnapshot) return { requeueAfterMs: 200 };
    throw e;
  }
}

class StaleSnapshot extends Error {}

/**
 * Phase transitions with optimistic concurrency (the resourceVersion we read): when the cache is
 * behind (a transition already written), the write fails instead of repeating it and its Event.
 */
class PhaseWriter {
  private resourceVersion: string | undefined;
  constructor(
    private readonly ctx: ControllerContext,
    private readonly live: CachedObject,
  ) {
    this.resourceVersion = live.metadata.resourceVersion;
  }

  async set(phase: SnapshotPhase): Promise<void> {
    const { ctx, live } = this;
    try {
      const res = await ctx.client.request<CachedObject>('PATCH', ctx.client.path(live.apiVersion, live.kind, live.metadata.namespace, live.metadata.name, 'status'), {
        body: { metadata: { resourceVersion: this.resourceVersion }, status: { phase } },
        contentType: 'application/merge-patch+json',
      });
      this.resourceVersion = res.metadata.resourceVersion;
      ctx.metrics.statusWrites.inc({ kind: live.kind });
    } catch (e) {
      if (isConflict(e)) throw new StaleSnapshot();
      throw e;
    }
  }
}

/**
 * Lookups of §9.2 step 2 in the caches. Absent → permanent failure; present but not usable (it
 * failed validation, so it is not in the Inventory) → transient: retried with back-off.
 */
function cacheLookup(caches: Caches): SnapshotLookup {
  const inv = caches.inventory;
  const find = <T>(kind: string, map: Map<string, T>, informer: Caches['instances'], ns: string, name: string): T | undefined => {
    const found = map.get(`${ns}/${name}`);
    if (!found && informer.get(ns, name)) throw new Error(`${kind} ${ns}/${name} is not valid yet`);
    return found;
  };
  return {
    instance: (ns, name) => find('Instance', inv.instances, caches.instances, ns, name),
    template: (ns, name) => find('Template', inv.templates, caches.templates, ns, name),
  };
}

/** Whether the Instance (or its Template) the cache lacks does exist on the server. */
async function onServerNotInCache(ctx: ControllerContext, snapshot: InstanceSnapshot): Promise<boolean> {
  const ref = snapshotInstanceRef(snapshot);
  const cached = ctx.caches.instances.get(ref.namespace, ref.name);
  const [kind, target] = cached ? (['Template', instanceTemplateRef(cached as unknown as Instance)] as const) : (['Instance', ref] as const);
  if (cached && ctx.caches.templates.get(target.namespace, target.name)) return false;
  try {
    await ctx.client.request('GET', ctx.client.path(INPUT_KINDS[kind].apiVersion, kind, target.namespace, target.name));
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

/** Snapshot keys to reconcile: spec changes of the snapshot, whitelist changes of its namespace. */
export function watchSnapshots(caches: Caches, enqueue: (key: string) => void): void {
  const key = (o: { metadata: { namespace?: string; name: string } }) => `InstanceSnapshot/${o.metadata.namespace}/${o.metadata.name}`;
  caches.snapshots.addIndex('namespace', (o) => [o.metadata.namespace ?? '']);
  caches.snapshots.on((type, obj, old) => {
    if (type === 'delete') return;
    // docs/behaviour.md §9.1: generation-changed predicate; status-only updates do not requeue.
    if (type === 'update' && old && obj.metadata.generation === old.metadata.generation) return;
    enqueue(key(obj));
  });
  caches.namespaces.on((type, obj, old) => {
    if (type === 'update' && old && JSON.stringify(old.metadata.labels) === JSON.stringify(obj.metadata.labels)) return;
    for (const s of caches.snapshots.byIndex('namespace', obj.metadata.name)) enqueue(key(s));
  });
}
