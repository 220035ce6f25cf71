/**
 * Delivers one rendered resource set: controller ownerReferences to the parent and the digest of
 * what is rendered (rendered-digest.ts), server-side apply (field manager `crownlabs-composer`,
 * force) of every object the live cache does not already hold, then, when every apply succeeded,
 * prune of the objects labelled with this parent's id AND owned by it that were not rendered.
 */
import { INPUT_KINDS, type InputKind, type KubeObject } from '../inputs/types.ts';
import { parentId, type ParentRef } from '../model/labels.ts';
import type { ControllerContext } from './context.ts';
import type { Caches } from './caches.ts';
import type { CachedObject } from '../kube/informer.ts';
import { isNotFound } from '../kube/client.ts';
import { serverSideApply } from '../kube/objects.ts';
import { firstDifference, liveHoldsRendered } from './live-compare.ts';
import { adoptionRefusal } from './adoption.ts';
import { outranks } from '../model/set-precedence.ts';
import { withRenderedDigest } from './rendered-digest.ts';

export interface ApplyOutcome {
  applied: number;
  skipped: number;
  pruned: number;
  /** Rendered objects whose live object is being deleted: re-created once gone. */
  terminating: number;
  /** Errors by object (`Kind/ns/name`): the set is applied fail-fast:false. */
  errors: { object: string; error: Error }[];
  /** Live objects after apply (server answers), by `Kind/ns/name`. */
  live: Map<string, Record<string, unknown>>;
}

export function objectId(o: { kind: string; metadata: { name: string; namespace?: string } }): string {
  return `${o.kind}/${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;
}

export function withOwner(objects: KubeObject[], owner: CachedObject): KubeObject[] {
  const ref = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid!, controller: true, blockOwnerDeletion: true };
  return objects.map((o) => ({ ...o, metadata: { ...o.metadata, ownerReferences: [ref] } }));
}

/**
 * Objects of a set that another live parent already renders (its controller owner reference),
 * objects the set renders twice, and live objects CrownLabs did not make (adoption.ts). Two parents
 * rendering one object (`my.inst` and `my-inst`) would take it from each other on every reconcile:
 * the one that comes later is refused instead, unless it outranks the other
 * (src/model/set-precedence.ts: a Tenant's set over an Instance's), which is then refused: its key
 * is in `takeovers`, to be reconciled again and report it.
 */
export function setConflicts(ctx: ControllerContext, owner: CachedObject, objects: readonly KubeObject[]): { errors: { object: string; error: Error }[]; takeovers: string[] } {
  const out: { object: string; error: Error }[] = [];
  const takeovers = new Set<string>();
  const seen = new Set<string>();
  for (const obj of objects) {
    const id = objectId(obj);
    if (seen.has(id)) out.push({ object: id, error: new Error('rendered twice by this resource set') });
    seen.add(id);
    const live = ctx.caches.liveOf(obj);
    if (!live) continue;
    const ref = live.metadata.ownerReferences?.find((r) => r.controller);
    if (!ref) {
      // One being deleted is re-created once gone (applySet), not adopted.
      const refusal = live.metadata.deletionTimestamp ? undefined : adoptionRefusal(live, ctx.config.targetLabel.key);
      if (refusal) out.push({ object: id, error: new Error(refusal) });
      continue;
    }
    if (ref.uid === owner.metadata.uid) continue;
    const other = liveParent(ctx, ref.kind, live.metadata.namespace, ref.name);
    // An owner that is gone leaves its children to the garbage collector: not a conflict.
    if (other?.metadata.uid !== ref.uid) continue;
    const key = [ref.kind, other.metadata.namespace, ref.name].filter(Boolean).join('/');
    if (outranks(owner.kind, ref.kind)) {
      takeovers.add(key);
      continue;
    }
    out.push({
      object: id,
      error: new Error(
        outranks(ref.kind, owner.kind)
          ? `already rendered for ${key}: ${ref.kind} objects take precedence over ${owner.kind} objects; rename this ${owner.kind} (nothing of this set is applied)`
          : `already rendered for ${key}, which renders the same object: only one of them can exist; rename one of the two (nothing of this set is applied)`,
      ),
    });
  }
  return { errors: out, takeovers: [...takeovers] };
}

/** A live parent; a cluster-scoped one (Tenant, Workspace) whatever the namespace of its child. */
function liveParent(ctx: ControllerContext, kind: string, namespace: string | undefined, name: string): CachedObject | undefined {
  return ctx.caches.parentInformer(kind)?.get(INPUT_KINDS[kind as InputKind]?.namespaced ? namespace : undefined, name);
}

/**
 * `keep`: a live object no longer rendered that must not be pruned yet (an Ingress whose HTTPRoute
 * is not Accepted); it is asked with the objects as the applies left them.
 */
export async function applySet(
  ctx: ControllerContext,
  parent: ParentRef,
  owner: CachedObject,
  rendered: KubeObject[],
  keep?: (child: CachedObject, live: ReadonlyMap<string, Record<string, unknown>>) => boolean,
): Promise<ApplyOutcome> {
  const out: ApplyOutcome = { applied: 0, skipped: 0, pruned: 0, terminating: 0, errors: [], live: new Map() };
  const objects = withOwner(withRenderedDigest(rendered), owner);
  // A set in conflict applies and prunes nothing: the reconciler reports the errors (Event, status).
  const conflicts = setConflicts(ctx, owner, objects);
  out.errors.push(...conflicts.errors);
  if (out.errors.length) return out;
  const wanted = new Set(objects.map(objectId));
  // Namespaces first: the objects inside them need them.
  const ordered = [...objects.filter((o) => o.kind === 'Namespace'), ...objects.filter((o) => o.kind !== 'Namespace')];
  for (const obj of ordered) {
    const id = objectId(obj);
    const live = ctx.caches.liveOf(obj);
    if (live?.metadata.deletionTimestamp) {
      // Being deleted (e.g. held by a finalizer): applying cannot stop that, and its DELETED
      // event enqueues the parent, which then recreates it.
      out.terminating++;
      out.live.set(id, live);
      continue;
    }
    if (live && liveHoldsRendered(obj, live)) {
      out.skipped++;
      out.live.set(id, live);
      ctx.metrics.writeSkips.inc({ kind: obj.kind });
      continue;
    }
    if (live) ctx.log.debug({ object: id, field: firstDifference(obj, live) }, 'drift: applying');
    try {
      // The answer is the live object: the next reconcile (and this one's status) reads it
      // before the watch brings it, and the watch event echoing it does not requeue the parent.
      const res = await ctx.caches.write(obj, () => serverSideApply(ctx.client, obj));
      out.applied++;
      out.live.set(id, res);
      ctx.metrics.applies.inc({ kind: obj.kind });
    } catch (e) {
      out.errors.push({ object: id, error: e as Error });
    }
  }
  // A failed apply prunes nothing (as kro's ApplySet and Flux): the old copy of a renamed object
  // stays until its new one exists. One being deleted does not hold prunes back: it may wait for them.
  const prunable = out.errors.length === 0 ? pruneCandidates(ctx.caches, parent, owner, wanted).filter((c) => !keep?.(c, out.live)) : [];
  for (const child of prunable) {
    const inf = ctx.caches.informerOf(child.apiVersion, child.kind);
    try {
      const res = await ctx.client.request<CachedObject | undefined>('DELETE', ctx.client.path(child.apiVersion, child.kind, child.metadata.namespace, child.metadata.name), {
        query: { propagationPolicy: 'Background' },
      });
      // Held by a finalizer: the answer is the terminating object; else it is gone.
      if (res?.metadata?.deletionTimestamp && res.metadata.finalizers?.length) inf?.noteWritten(res);
      else inf?.noteDeleted(child.metadata.namespace, child.metadata.name);
      out.pruned++;
      ctx.metrics.prunes.inc({ kind: child.kind });
    } catch (e) {
      if (isNotFound(e)) inf?.noteDeleted(child.metadata.namespace, child.metadata.name);
      else out.errors.push({ object: objectId(child), error: e as Error });
    }
  }
  // The parents whose objects this set took run again (once the cache holds what we wrote), and report that they are refused.
  for (const key of conflicts.takeovers) ctx.enqueue?.(key);
  return out;
}

/**
 * What applySet prunes for a parent: the cached objects labelled with the parent's id AND owned by
 * it (its uid in their ownerReferences) that are not in `wanted` (`objectId`s) and not being
 * deleted. `crownlabs diff` lists the same objects.
 */
export function pruneCandidates(caches: Pick<Caches, 'children'>, parent: ParentRef, owner: Pick<CachedObject, 'metadata'>, wanted: ReadonlySet<string>): CachedObject[] {
  const uid = owner.metadata.uid;
  const pid = parentId(parent);
  const out: CachedObject[] = [];
  for (const inf of new Set(caches.children.values())) {
    for (const child of inf.byParentId(pid)) {
      if (wanted.has(objectId(child)) || child.metadata.deletionTimestamp) continue;
      // Never an object we do not own, even when it carries our labels.
      if (!(child.metadata.ownerReferences ?? []).some((r) => r.uid === uid)) continue;
      out.push(child);
    }
  }
  return out;
}

/**
 * Merge-patches a parent's status subresource with what differs from `desired` (fields compared
 * as a subset); nothing is sent when nothing differs. Returns whether it wrote.
 */
export async function writeStatus(ctx: ControllerContext, obj: CachedObject, desired: Record<string, unknown>): Promise<boolean> {
  const patch = statusPatch(desired, obj.status);
  if (!patch) return false;
  const res = await ctx.client.request<CachedObject>('PATCH', ctx.client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name, 'status'), {
    body: { status: patch },
    contentType: 'application/merge-patch+json',
  });
  // A reconcile that runs before the watch brings this write compares with it, not the older copy.
  ctx.caches.noteWritten(res);
  ctx.metrics.statusWrites.inc({ kind: obj.kind });
  return true;
}

/**
 * The JSON merge patch (RFC 7386) that makes `current` hold `desired`, or undefined when it
 * already does. Objects are compared field by field, lists as a whole.
 *
 * A desired `undefined` means "absent", as upstream's `omitempty` status fields
 * (`phase`, `url`, `ip`): upstream patches the status with controller-runtime's `MergeFrom`,
 * the difference of two JSON encodings that leave empty fields out, so an empty field is never
 * written, and one that becomes empty (the ip and url of a stopped Instance) is removed with
 * `null`. An empty string on either side counts as absent when the other side is absent, so an
 * empty string written by an older version is left alone, as upstream leaves it.
 */
export function statusPatch(desired: Record<string, unknown>, current: unknown): Record<string, unknown> | undefined {
  const cur = isPlainObject(current) ? current : {};
  const patch: Record<string, unknown> = {};
  for (const [k, want] of Object.entries(desired)) {
    const have = cur[k];
    if (want === undefined || want === null) {
      if (have !== undefined && have !== null && have !== '') patch[k] = null;
    } else if (isPlainObject(want)) {
      if (isPlainObject(have)) {
        const sub = statusPatch(want, have);
        if (sub) patch[k] = sub;
      } else patch[k] = dropAbsent(want);
    } else if (!sameValue(want, have)) patch[k] = want;
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dropAbsent(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null) out[k] = isPlainObject(v) ? dropAbsent(v) : v;
  return out;
}

function sameValue(desired: unknown, current: unknown): boolean {
  if (Array.isArray(desired)) {
    return Array.isArray(current) && current.length === desired.length && desired.every((d, i) => sameValue(d, current[i]));
  }
  if (isPlainObject(desired)) {
    return isPlainObject(current) && Object.entries(desired).every(([k, v]) => sameValue(v, current[k]));
  }
  if (desired === '' && (current === undefined || current === null)) return true;
  return desired === current;
}
