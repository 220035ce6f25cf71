/**
 * What the apply-controller would do to the cluster, without doing it (`crownlabs diff`). The same
 * steps as a reconcile, for every parent at once: the controller's caches (read once, not watched)
 * give the inputs and the live children; compose renders with the controller's options (bound
 * MyDrive PV, personal-namespace keep-alive); each rendered object the controller would apply
 * (applySet: owner reference to the live parent, skipped when the live object already holds it)
 * goes to the server as a dry-run apply (field manager `crownlabs-composer`, force), and the
 * answer is compared with the live object; applySet's prune candidates are listed as prunes, and
 * so are the VMIs a stopped ephemeral Instance releases (released-workloads.ts). The controller's
 * writes on the parents themselves (an Instance's labels, prettyName and frozen Template spec, a
 * Tenant's labels, the finalizer) are dry-run as the same merge patches (parent-patches.ts); only
 * status writes are left out.
 */
import { Inventory } from '../inputs/inventory.ts';
import type { Problem } from '../inputs/problems.ts';
import type { InputObject, Instance, KubeObject, Tenant } from '../inputs/types.ts';
import { compose, renderUnit, type RenderUnit } from '../compose/compose.ts';
import type { ComposerConfig } from '../config/config.ts';
import { FROZEN_TEMPLATE_ANNOTATION } from '../model/instance-plan.ts';
import { parentKey } from '../model/labels.ts';
import { tenantNamespaceName } from '../model/naming.ts';
import { heldIngresses, HTTP_ROUTE_API_VERSION, type RouteState } from '../model/exposition.ts';
import { objectId, pruneCandidates, withOwner } from './apply-set.ts';
import { secretWithDigestsAsData } from './secret-digest.ts';
import { FIELD_MANAGER, serverSideApply } from '../kube/objects.ts';
import { releasedWorkloads } from './released-workloads.ts';
import { finalizerPatch, instanceMetadataPatch, tenantLabelPatch, type MetadataPatch } from './parent-patches.ts';
import { Caches } from './caches.ts';
import type { ChildGuardConfig } from './child-guard.ts';
import type { CachedObject } from '../kube/informer.ts';
import { isNotFound, KubeApiError, type KubeClient } from '../kube/client.ts';
import { liveHoldsRendered } from './live-compare.ts';
import { RENDERED_DIGEST_LABEL, withRenderedDigest } from './rendered-digest.ts';
import { adoptionRefusal } from './adoption.ts';
import { changedPaths, pruneReason, restartReason, takeoverManagers, withoutManagedFields, type Obj, type ObjectChange } from './object-diff.ts';
import { myDriveShare } from './mydrive-share.ts';
import { personalNamespaceKeepAlive } from './reconcile-tenant.ts';

export interface ObjectDiff extends ObjectChange {
  /** The live object (managedFields left out); undefined for a create. */
  live?: Obj;
  /** The dry-run answer (managedFields left out); undefined for a prune. */
  merged?: Obj;
}

export interface DiffResult {
  changes: ObjectDiff[];
  unchanged: number;
  /** Objects whose GET or dry-run failed (`Kind/ns/name: message`). */
  errors: string[];
  /** Inputs the controller would skip or fail (printed; errors when the inputs are files). */
  problems: Problem[];
}

export interface DiffOptions {
  client: KubeClient;
  config: ComposerConfig;
  /** Inputs read from files; undefined: the CrownLabs resources in the cluster, as the controller reads them. */
  files?: Inventory;
  /** Which rendered or live objects are compared (namespace, label selector); default all. */
  include?: (o: { kind: string; metadata: { namespace?: string; labels?: Record<string, string> } }) => boolean;
  /** `--tenant-ns-keep-alive` of the controller. */
  keepAliveMs: number;
  now?: number;
  /** Objects compared at once (each is a GET and a dry-run apply). */
  concurrency?: number;
}

/** The controller's caches listed once: resolves when every informer has listed, rejects at the first failure. */
export async function readClusterOnce(client: KubeClient, problems: Problem[] = [], childGuard?: ChildGuardConfig): Promise<Caches> {
  let fail!: (e: Error) => void;
  const failed = new Promise<never>((_, reject) => (fail = reject));
  const caches = new Caches(client, {
    onError: (kind, err) =>
      fail(new Error(err instanceof KubeApiError && err.code === 404 ? `the server does not serve ${kind} (is its CRD installed?)` : `cannot list ${kind}: ${err.message}`)),
    onInvalid: (obj, ps) => {
      for (const p of ps) problems.push({ ...p, severity: 'warning', message: `ignored by the controller: ${p.message}` });
    },
    childGuard,
  });
  caches.start();
  try {
    await Promise.race([caches.synced(), failed]);
  } finally {
    caches.stop();
  }
  return caches;
}

export async function diffAgainstCluster(opts: DiffOptions): Promise<DiffResult> {
  const { client, config } = opts;
  const include = opts.include ?? (() => true);
  const now = opts.now ?? Date.now();
  const problems: Problem[] = [];
  const caches = await readClusterOnce(client, problems, config);
  const inventory = opts.files ? asReconciled(opts.files, caches) : caches.inventory;

  const instancesIn = (ns: string) =>
    opts.files ? [...inventory.instances.values()].filter((i) => i.metadata.namespace === ns).length : caches.instances.list().filter((i) => i.metadata.namespace === ns).length;
  const templatesIn = (ns: string) => [...inventory.templates.values()].filter((t) => t.metadata.namespace === ns).length;
  const composition = compose(inventory, config, {
    myDriveShare: (t) => myDriveShare({ caches, config }, t),
    keepPersonalNamespace: (t: Tenant) => {
      const ns = tenantNamespaceName(t.metadata.name);
      return personalNamespaceKeepAlive(t, instancesIn(ns), now, opts.keepAliveMs, templatesIn(ns)).keep;
    },
  });
  // From the cluster, a parent that does not render is one the controller fails (and changes nothing for).
  problems.push(...composition.problems.map((p) => (opts.files ? p : { ...p, severity: 'warning' as const })));

  interface Planned {
    unit: RenderUnit;
    owner?: CachedObject;
    objects: KubeObject[];
  }
  const planned: Planned[] = [];
  for (const unit of composition.units) {
    const owner = liveParent(caches, unit);
    if (owner?.metadata.deletionTimestamp) continue; // the controller leaves it: its children are garbage-collected
    if (unit.parent.kind === 'InstanceSnapshot' && ['Completed', 'Failed'].includes(String((owner?.status as { phase?: string } | undefined)?.phase))) continue;
    // As applySet: the digest of what is rendered goes on (not on a snapshot's Job, created once).
    const rendered = unit.parent.kind === 'InstanceSnapshot' ? renderUnit(unit) : withRenderedDigest(renderUnit(unit));
    planned.push({ unit, owner, objects: owner ? withOwner(rendered, owner) : rendered });
  }
  const renderedNamespaces = new Set(planned.flatMap((p) => p.objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)));

  const tasks: { id: string; set: string; run: () => Promise<ObjectDiff | undefined> }[] = [];
  const prunes: (ObjectDiff & { set: string })[] = [];
  for (const p of planned) {
    // Namespaces first, as applySet: the objects inside them need them.
    const ordered = [...p.objects.filter((o) => o.kind === 'Namespace'), ...p.objects.filter((o) => o.kind !== 'Namespace')];
    for (const obj of ordered) {
      if (!include(obj)) continue;
      // A snapshot's Job is created once (its tag is the controller's clock) and never re-applied.
      const target = config.targetLabel.key;
      const run = p.unit.parent.kind === 'InstanceSnapshot' ? () => createOnly(client, caches, obj, renderedNamespaces, target) : () => compareRendered(client, caches, obj, renderedNamespaces, target);
      tasks.push({ id: objectId(obj), set: parentKey(p.unit.parent), run });
    }
    // The controller's own writes on the parent (metadata, not status) come before its set.
    const write = p.owner && parentPatch(inventory, p.unit, p.owner, config);
    if (write && include(p.owner!)) {
      const owner = p.owner!;
      // Its failure stops the reconcile before the set is applied or pruned.
      tasks.push({ id: objectId(owner), set: parentKey(p.unit.parent), run: () => dryRunPatch(client, owner, write) });
    }
    // The controller prunes for the parents it reconciles with applySet (a snapshot's Job is never pruned).
    if (p.owner && p.unit.parent.kind !== 'InstanceSnapshot') {
      const wanted = new Set(p.objects.map(objectId));
      const held = heldIngresses(p.objects, p.unit.plan?.gateway);
      const liveRoute = (name: string) => caches.child(HTTP_ROUTE_API_VERSION, 'HTTPRoute')?.get(p.owner!.metadata.namespace, name) as RouteState | undefined;
      for (const child of pruneCandidates(caches, p.unit.parent, p.owner, wanted)) {
        if (!include(child)) continue;
        const isHeld = held(child, liveRoute);
        prunes.push({
          set: parentKey(p.unit.parent),
          id: objectId(child),
          kind: child.kind,
          action: 'prune',
          paths: [],
          takeover: [],
          danger: pruneReason(child.kind),
          live: secretWithDigestsAsData(withoutManagedFields(child as Obj)),
          note: isHeld
            ? `owned by ${parentKey(p.unit.parent)}, no longer rendered: kept until its HTTPRoute ${child.metadata.name} is Accepted by the Gateway, then pruned`
            : `owned by ${parentKey(p.unit.parent)}, no longer rendered`,
        });
      }
      for (const vmi of p.unit.plan ? releasedWorkloads(caches, p.unit.plan, p.owner) : []) {
        if (!include(vmi)) continue;
        prunes.push({
          set: parentKey(p.unit.parent),
          id: objectId(vmi),
          kind: vmi.kind,
          action: 'prune',
          paths: [],
          takeover: [],
          danger: pruneReason(vmi.kind),
          live: withoutManagedFields(vmi as Obj),
          note: `controlled by ${parentKey(p.unit.parent)}, which is stopped: released (stoppedEphemeral: release), though the controller did not create it`,
        });
      }
    }
  }

  // A few objects at a time: each is a GET and a dry-run apply (the client's rate limit applies).
  const results: ({ ok: ObjectDiff | undefined } | { error: string })[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      try {
        results[i] = { ok: await tasks[i].run() };
      } catch (e) {
        results[i] = { error: `${tasks[i].id}: ${errorMessage(e)}` };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 8) }, worker));

  const changes: ObjectDiff[] = [];
  const errors: string[] = [];
  const failedSets = new Set<string>();
  let unchanged = 0;
  results.forEach((r, i) => {
    if ('error' in r) {
      errors.push(r.error);
      failedSets.add(tasks[i].set);
    } else if (r.ok) changes.push(r.ok);
    else unchanged++;
  });
  // As applySet: a set with a failed apply prunes nothing.
  const pruned: ObjectDiff[] = [];
  for (const { set, ...prune } of prunes) {
    if (!failedSets.has(set)) pruned.push(prune);
    else errors.push(`${prune.id}: not pruned while an apply of ${set} fails`);
  }
  return { changes: [...changes, ...pruned], unchanged, errors, problems };
}

/** The merge patch the parent's reconciler writes on the parent itself, from the inputs diff reads. */
function parentPatch(inventory: Inventory, unit: RenderUnit, owner: CachedObject, config: ComposerConfig): MetadataPatch | undefined {
  const { kind, name, namespace } = unit.parent;
  if (kind === 'Instance') {
    const found = inventory.instances.get(`${namespace}/${name}`);
    const instance = found && overLive(found, owner);
    const template = instance && inventory.templateOf(instance);
    return instance && template ? instanceMetadataPatch(instance, template, owner.metadata.uid ?? `${namespace}/${name}`, inventory.level) : undefined;
  }
  if (kind !== 'Tenant' && kind !== 'Workspace') return undefined;
  const finalizer = finalizerPatch(owner, true);
  const found = kind === 'Tenant' ? inventory.tenants.get(name) : undefined;
  const tenant = found && overLive(found, owner);
  const labels = tenant && tenantLabelPatch(tenant, owner.metadata.labels, inventory.workspaces, config);
  if (!finalizer && !labels) return undefined;
  return { metadata: { ...finalizer?.metadata, ...labels?.metadata } };
}

/**
 * An input parent as the controller finds it once the input is applied: the labels and annotations
 * an apply leaves in place (the live ones, the input's over them), and the live prettyName when the
 * input has none. From the cluster, the input is the live object and this changes nothing.
 */
function overLive<T extends Instance | Tenant>(input: T, live: CachedObject): T {
  const metadata = {
    ...input.metadata,
    labels: { ...live.metadata.labels, ...input.metadata.labels },
    annotations: { ...live.metadata.annotations, ...input.metadata.annotations },
  };
  const livePretty = (live.spec as { prettyName?: string } | undefined)?.prettyName;
  const spec = input.kind === 'Instance' && !(input as Instance).spec.prettyName && livePretty ? { ...input.spec, prettyName: livePretty } : input.spec;
  return { ...input, metadata, spec } as T;
}

/** A parent's metadata write, dry-run as a merge patch (field manager crownlabs-composer): undefined when it changes nothing. */
async function dryRunPatch(client: KubeClient, owner: CachedObject, patch: MetadataPatch): Promise<ObjectDiff | undefined> {
  const path = client.path(owner.apiVersion, owner.kind, owner.metadata.namespace, owner.metadata.name);
  const live = await client.request<Obj>('GET', path);
  // Guarded by the resourceVersion the reconcile read: here the one just read.
  const body = patch.metadata && 'resourceVersion' in patch.metadata ? { ...patch, metadata: { ...patch.metadata, resourceVersion: live.metadata.resourceVersion } } : patch;
  const merged = await client.request<Obj>('PATCH', path, { query: { fieldManager: FIELD_MANAGER, dryRun: 'All' }, body, contentType: 'application/merge-patch+json' });
  const [l, m] = [withoutManagedFields(live), withoutManagedFields(merged)];
  const paths = changedPaths(l, m);
  if (paths.length === 0) return undefined;
  return { id: objectId(owner), kind: owner.kind, action: 'change', live: l, merged: m, paths, takeover: [], note: `written by the controller itself: a merge patch, field manager ${FIELD_MANAGER}` };
}

function errorMessage(e: unknown): string {
  if (e instanceof KubeApiError) {
    const msg = (e.body as { message?: string } | undefined)?.message;
    return `${e.code}${msg ? ` ${msg}` : ''}`;
  }
  return (e as Error).message;
}

/** The live parent of a set, from the controller's caches. */
function liveParent(caches: Caches, unit: RenderUnit): CachedObject | undefined {
  const p = unit.parent;
  return caches.parentInformer(p.kind)?.get(p.namespace, p.name);
}

/**
 * Inputs from files as the controller would see them once applied: an Instance that exists keeps
 * its UID (paths, URLs and cookie secrets derive from it) and the Template spec the controller
 * froze on it; Namespaces and Secrets the files do not describe are the live ones.
 */
export function asReconciled(files: Inventory, caches: Pick<Caches, 'instances' | 'inventory'>): Inventory {
  const out = new Inventory();
  for (const obj of files.allObjects()) {
    let o: InputObject = obj;
    if (obj.kind === 'Instance') {
      const live = caches.instances.get(obj.metadata.namespace, obj.metadata.name);
      if (live) {
        const frozen = live.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION];
        const annotations = { ...obj.metadata.annotations };
        if (frozen && !annotations[FROZEN_TEMPLATE_ANNOTATION]) annotations[FROZEN_TEMPLATE_ANNOTATION] = frozen;
        o = { ...obj, metadata: { ...obj.metadata, uid: live.metadata.uid, annotations } } as Instance;
      }
    }
    out.upsert(o, files.sourceOf(obj));
  }
  for (const ns of caches.inventory.namespaces.values()) if (!out.namespaces.has(ns.metadata.name)) out.upsert(ns);
  for (const [key, s] of caches.inventory.secrets) if (!out.secrets.has(key)) out.upsert(s);
  return out;
}

/** A rendered object the controller only creates: undefined when it exists. */
async function createOnly(client: KubeClient, caches: Caches, obj: KubeObject, renderedNamespaces: ReadonlySet<string>, targetKey: string): Promise<ObjectDiff | undefined> {
  if (caches.liveOf(obj)) return undefined;
  try {
    await client.request('GET', client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name));
    return undefined;
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  return compareRendered(client, caches, obj, renderedNamespaces, targetKey);
}

/** One rendered object: undefined when the controller would leave it as it is. */
async function compareRendered(client: KubeClient, caches: Caches, obj: KubeObject, renderedNamespaces: ReadonlySet<string>, targetKey: string): Promise<ObjectDiff | undefined> {
  const id = objectId(obj);
  const base = { id, kind: obj.kind, paths: [] as string[], takeover: [] as string[] };
  // applySet skips what its cache already holds (managedFields are not cached: read below).
  const cached = caches.liveOf(obj);
  if (cached && !cached.metadata.deletionTimestamp && liveHoldsRendered(obj, cached)) return undefined;
  let live: Obj | undefined;
  try {
    live = await client.request<Obj>('GET', client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name));
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (live?.metadata.deletionTimestamp) {
    return { ...base, action: 'create', merged: obj as Obj, note: 'the live object is being deleted: the controller re-creates it once it is gone' };
  }
  if (live && liveHoldsRendered(obj, live)) return undefined;
  // The controller refuses the set of an object it may not adopt (adoption.ts): shown as an error.
  const liveMeta = live?.metadata as CachedObject['metadata'] | undefined;
  const refusal = liveMeta && !liveMeta.ownerReferences?.some((r) => r.controller) ? adoptionRefusal({ metadata: liveMeta }, targetKey) : undefined;
  if (refusal) throw new Error(refusal);
  let merged: Obj;
  let note: string | undefined;
  try {
    merged = (await serverSideApply(client, obj, { dryRun: true })) as Obj;
  } catch (e) {
    // Its namespace is rendered too but not there yet: the server cannot dry-run inside it.
    const missingNs = e instanceof KubeApiError && e.code === 404 && (e.body as { details?: { kind?: string } } | undefined)?.details?.kind === 'namespaces';
    if (!live && missingNs && obj.metadata.namespace && renderedNamespaces.has(obj.metadata.namespace)) {
      merged = obj as Obj;
      note = `namespace ${obj.metadata.namespace} is created first: shown as rendered, without the server's defaults`;
    } else throw e;
  }
  const l = withoutManagedFields(live);
  const m = withoutManagedFields(merged);
  if (!l) return { ...base, action: 'create', merged: m, note };
  // The digest changes with whatever else does: shown as a path only when it is the one change.
  const digestPath = `metadata.labels[${JSON.stringify(RENDERED_DIGEST_LABEL)}]`;
  const changed = changedPaths(l, m);
  const paths = changed.length > 1 ? changed.filter((p) => p !== digestPath) : changed;
  if (paths.length === 0) return undefined;
  if (paths[0] === digestPath) note = 'only the digest of what is rendered is recorded: no other field changes';
  return { ...base, action: 'change', live: l, merged: m, paths, danger: restartReason(l, m), takeover: takeoverManagers(live), note };
}
