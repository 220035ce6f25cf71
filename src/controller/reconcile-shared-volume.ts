/**
 * SharedVolume reconciler (docs/behaviour.md §16.7), at the API levels that have the kind: the
 * claim compose renders is applied, then its provisioning Job, created once (never applied again
 * nor pruned; one left by another operator is read, not changed); the phase is read from the two
 * (Pending → Provisioning → Ready); once Ready the claim is labelled provisioned and the finalizer
 * set, which holds a deletion while a Template or an Instance mounts the volume.
 *
 * Watches: SharedVolumes (not status), their namespace's labels, Templates (the volumes they mount,
 * before and after a change) and deleted mirror claims: a held deletion goes on when the last
 * Template and Instance let go.
 */
import { compose, renderUnit } from '../compose/compose.ts';
import type { KubeObject, SharedVolume, Template } from '../inputs/types.ts';
import type { ParentRef } from '../model/labels.ts';
import {
  PROVISIONING_DONE,
  PROVISIONING_LABEL,
  SHARED_VOLUME_FINALIZER,
  heldBy,
  mirroredVolume,
  mountersMessage,
  type MirrorClaim,
  sharedVolumeLabels,
  sharedVolumeMounters,
  sharedVolumeState,
  shrinks,
  templateMounts,
  type SharedVolumeObservation,
} from '../model/shared-volume.ts';
import { applySet, objectId, writeStatus } from './apply-set.ts';
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import { setFinalizer } from './finalizer.ts';
import { metadataOrSpecChanged } from './predicates.ts';
import { failedValidation } from './terminal-error.ts';
import type { CachedObject } from '../kube/informer.ts';
import { KubeApiError } from '../kube/client.ts';
import { liveOrServer } from './live-lookup.ts';
import { markProvisioned } from './provisioning-jobs.ts';

// Its access (the claim, the Job, its own metadata and status) is derived from its rendered set (src/platform/derive-rbac.ts).
const CLAIM = { apiVersion: 'v1', kind: 'PersistentVolumeClaim' } as const;
const JOB = { apiVersion: 'batch/v1', kind: 'Job' } as const;

/** A claim the API server refused for the namespace's ResourceQuota is retried this often. */
const QUOTA_RETRY_MS = 60_000;

export async function reconcileSharedVolume(ctx: ControllerContext, namespace: string, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.sharedVolumes?.get(namespace, name);
  if (!live || !targeted(ctx, namespace)) return {};
  if (live.metadata.deletionTimestamp) return deleteSharedVolume(ctx, live);
  const sv = ctx.caches.inventory.sharedVolumes.get(`${namespace}/${name}`);
  if (!sv) throw failedValidation(ctx.caches, live);
  const record = (type: 'Normal' | 'Warning', reason: string, message: string) => ctx.events.record(live, type, reason, message);

  const labels = sharedVolumeLabels();
  if (Object.entries(labels).some(([k, v]) => live.metadata.labels?.[k] !== v)) {
    await ctx.client.request('PATCH', ctx.client.path(live.apiVersion, live.kind, namespace, name), { body: { metadata: { labels } }, contentType: 'application/merge-patch+json' });
  }

  const parent: ParentRef = { kind: 'SharedVolume', namespace, name };
  const unit = compose(ctx.caches.inventory, ctx.config, { parent }).units[0];
  if (!unit) throw new Error(`SharedVolume ${namespace}/${name}: nothing to render`);
  const rendered = renderUnit(unit);
  const claim = rendered.find((o) => o.kind === CLAIM.kind)!;
  const job = rendered.find((o) => o.kind === JOB.kind)!;
  const liveClaim = ctx.caches.liveOf(claim);
  const claimSize = (liveClaim?.spec as { resources?: { requests?: { storage?: string } } } | undefined)?.resources?.requests?.storage;
  const status = (s: { phase: string; pvName?: string }) => writeStatus(ctx, live, { phase: s.phase, pvName: s.pvName });
  const applyFailed = async (errors: { object: string; error: Error }[]): Promise<ReconcileResult> => {
    if (errors.some((e) => exceededQuota(e.error))) {
      await status({ phase: 'ResourceQuotaExceeded' });
      await record('Warning', 'ResourceQuotaExceeded', `the claim ${claim.metadata.name} exceeds the resource quota of namespace ${namespace}`);
      return { requeueAfterMs: QUOTA_RETRY_MS };
    }
    const message = errors.map((e) => `${e.object}: ${e.error.message}`).join('; ');
    await status({ phase: 'Error', pvName: (live.status as SharedVolume['status'])?.pvName });
    await record('Warning', 'ReconcileFailed', message);
    throw new Error(`SharedVolume ${namespace}/${name}: ${message}`);
  };

  // A smaller size is refused before the API server refuses it, and said where the manager looks.
  if (shrinks(sv.spec, claimSize)) {
    const state = sharedVolumeState(sv, { claimSize, provisioned: false });
    await status({ phase: state.phase, pvName: (live.status as SharedVolume['status'])?.pvName });
    await record('Warning', state.problem!.reason, state.problem!.message);
    return {};
  }

  // The claim first: its answer says whether it was provisioned, also under another operator.
  const keepJob = (child: CachedObject) => child.kind === JOB.kind;
  const first = await applySet(ctx, parent, live, [claim], keepJob);
  if (first.errors.length) return applyFailed(first.errors);
  const claimNow = (first.live.get(objectId(claim)) as CachedObject | undefined) ?? liveClaim;
  const provisioned = claimNow?.metadata.labels?.[PROVISIONING_LABEL] === PROVISIONING_DONE;
  // The Job is created once: its spec cannot change, and one may be another operator's (not cached).
  let jobNow = provisioned ? undefined : await liveOrServer(ctx, job);
  // One of a deleted volume of the same name waits for the garbage collector: its outcome is not this volume's.
  if (jobNow && !(jobNow.metadata.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid)) {
    throw new Error(`SharedVolume ${namespace}/${name}: Job ${job.metadata.name} exists and is not owned by this SharedVolume`);
  }
  if (!provisioned && !jobNow) {
    const second = await applySet(ctx, parent, live, rendered, keepJob);
    if (second.errors.length) return applyFailed(second.errors);
    jobNow = second.live.get(objectId(job)) as CachedObject | undefined;
  }
  const state = sharedVolumeState(sv, observe(claimNow, jobNow, provisioned));
  if (state.markProvisioned) await markProvisioned(ctx, { namespace, name: claim.metadata.name });
  if (state.protect) await setFinalizer(ctx, live, true, SHARED_VOLUME_FINALIZER);
  if (state.problem) await record('Warning', state.problem.reason, state.problem.message);
  await status(state);
  return {};
}

/** Deleting: held while a Template or an Instance mounts the volume; the claim and Job go with it (owner references). */
async function deleteSharedVolume(ctx: ControllerContext, live: CachedObject): Promise<ReconcileResult> {
  if (!(live.metadata.finalizers ?? []).includes(SHARED_VOLUME_FINALIZER)) return {};
  await writeStatus(ctx, live, { phase: 'Deleting' });
  // The Templates as stored (those that fail validation still mount it) and the Instances' mirror claims.
  const claims = (ctx.caches.child(CLAIM.apiVersion, CLAIM.kind)?.list() ?? []) as unknown as MirrorClaim[];
  const mounters = sharedVolumeMounters(live, ctx.caches.templates.list() as unknown as Template[], claims);
  if (heldBy(mounters)) {
    await ctx.events.record(live, 'Warning', 'DeletionBlocked', mountersMessage(mounters));
    return {};
  }
  await setFinalizer(ctx, live, false, SHARED_VOLUME_FINALIZER);
  return {};
}

function observe(claim: CachedObject | undefined, job: CachedObject | undefined, provisioned: boolean): SharedVolumeObservation {
  const c = claim as { spec?: { volumeName?: string; resources?: { requests?: { storage?: string } } }; status?: { phase?: string } } | undefined;
  const j = job as { status?: { succeeded?: number; conditions?: { type: string; status: string }[] } } | undefined;
  const condition = (type: string) => (j?.status?.conditions ?? []).some((x) => x.type === type && x.status === 'True');
  return {
    claimSize: c?.spec?.resources?.requests?.storage,
    claimPhase: c?.status?.phase,
    volumeName: c?.spec?.volumeName,
    provisioned,
    job: j ? { succeeded: (j.status?.succeeded ?? 0) > 0 || condition('Complete'), failed: condition('Failed') } : undefined,
  };
}

function exceededQuota(e: Error): boolean {
  return e instanceof KubeApiError && e.code === 403 && e.message.includes('exceeded quota');
}

/** Upstream reconciles a SharedVolume only in a namespace carrying the target label. */
function targeted(ctx: ControllerContext, namespace: string): boolean {
  const ns = ctx.caches.namespaces.get(undefined, namespace);
  return ns?.metadata.labels?.[ctx.config.targetLabel.key] === ctx.config.targetLabel.value;
}

export function watchSharedVolumes(caches: Caches, enqueue: (key: string) => void): void {
  const volumes = caches.sharedVolumes;
  if (!volumes) return;
  const key = (ns: string, name: string) => `SharedVolume/${ns}/${name}`;
  volumes.addIndex('namespace', (o) => [o.metadata.namespace ?? '']);
  volumes.on((type, obj, old) => {
    if (type === 'delete') return;
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    enqueue(key(obj.metadata.namespace ?? '', obj.metadata.name));
  });
  caches.namespaces.on((type, obj, old) => {
    if (type === 'update' && old && JSON.stringify(old.metadata.labels) === JSON.stringify(obj.metadata.labels)) return;
    for (const v of volumes.byIndex('namespace', obj.metadata.name)) enqueue(key(v.metadata.namespace ?? '', v.metadata.name));
  });
  // A Template that mounted a volume and no longer does (edited, deleted) may release its deletion.
  const mounted = (t: CachedObject | undefined) => (t?.spec ? templateMounts(t as unknown as Template) : []);
  const enqueueVolume = (k: string | undefined) => {
    if (!k) return;
    const [ns, name] = k.split('/');
    if (volumes.get(ns, name)) enqueue(key(ns, name));
  };
  caches.templates.on((_type, obj, old) => {
    for (const k of new Set([...mounted(obj), ...mounted(old)])) enqueueVolume(k);
  });
  // So does the last mirror claim of an Instance that mounted it, once gone.
  caches.child(CLAIM.apiVersion, CLAIM.kind)?.on((type, obj) => {
    if (type === 'delete') enqueueVolume(mirroredVolume(obj as unknown as MirrorClaim));
  });
}
