/**
 * What an event of a rendered child asks of its parent: a full reconcile (compose, apply, prune,
 * status) when something we render may have changed or the child appeared or went away; for an
 * Instance, only its status when nothing but the child's status changed; nothing when the parent
 * reads no status of that child (a tenant's ResourceQuota, which kube-controller-manager updates
 * with every pod). An object that names a parent that does not exist, or that does not render
 * it (child-guard.ts), asks nothing.
 */
import type { CachedObject, InformerEvent } from '../kube/informer.ts';
import { renderingParent, type ChildGuardConfig } from './child-guard.ts';
import { onlyStatusChanged } from './live-compare.ts';

export interface ChildEventScope {
  guard: ChildGuardConfig;
  /** Whether the parent of a work-queue key is in the caches. */
  parentExists: (key: string) => boolean;
}

export interface ParentRequest {
  /** The work queue key of the parent. */
  key: string;
  /** Only the parent's status needs to be derived again (`WorkQueue.addLight`). */
  light: boolean;
}

export function childEventRequest(type: InformerEvent, obj: CachedObject, old: CachedObject | undefined, own: boolean, scope: ChildEventScope): ParentRequest | undefined {
  // `own`: the echo of an apply or prune of the parent's reconcile, which saw the answer.
  if (own || (old && old.metadata.resourceVersion === obj.metadata.resourceVersion)) return undefined;
  // A VMI maps to the Instance its `crownlabs.polito.it/instance` label names (also one KubeVirt made for a VM).
  const key = renderingParent(obj, scope.guard);
  if (!key || !scope.parentExists(key)) return undefined;
  if (!statusOnly(type, obj, old)) return { key, light: false };
  const kind = key.slice(0, key.indexOf('/'));
  if (kind === 'Instance') return { key, light: true };
  // A snapshot follows its Job's status, a SharedVolume its claim's and its Job's; a Tenant reads
  // its MyDrive claim's (Bound, the PV) and, at e62be9e, its provisioning Job's.
  if (kind === 'InstanceSnapshot' || kind === 'SharedVolume' || (kind === 'Tenant' && (obj.kind === 'PersistentVolumeClaim' || obj.kind === 'Job'))) return { key, light: false };
  return undefined;
}

/**
 * Nothing we render changed: an update of the status alone; any event of a VMI that KubeVirt made
 * for a persistent VM (owned by the VM: never rendered, applied or pruned, only read); or an
 * Instance's child appearing with the Instance as its controller, which only our apply creates:
 * the watch brought it before the apply's answer was read (the full reconcile is running or done).
 */
function statusOnly(type: InformerEvent, obj: CachedObject, old: CachedObject | undefined): boolean {
  const owner = (obj.metadata.ownerReferences ?? []).find((r) => r.controller);
  if (obj.kind === 'VirtualMachineInstance' && owner?.kind === 'VirtualMachine') return true;
  if (type === 'add') return owner?.kind === 'Instance';
  return type === 'update' && !!old && onlyStatusChanged(obj, old);
}

