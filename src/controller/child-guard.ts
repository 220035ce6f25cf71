/**
 * Which watched objects can be children the controller renders (docs/behaviour.md §0.8). Our
 * managed-by label and parent annotation are plain metadata: anyone who may write an object may
 * set them. A child informer keeps an object only when the parent its annotation names (the VMI's
 * `crownlabs.polito.it/instance` label, for VMIs) renders objects of its kind into its namespace;
 * in a sandbox, where the tenant has edit rights, only the three objects the Tenant renders there,
 * by kind and name. So what a tenant writes in her sandbox never enters the caches, and an
 * object cannot name a parent in another namespace to have it reconciled.
 */
import { COMPOSER, LABEL } from '../model/labels.ts';
import { SANDBOX_OBJECTS, sandboxNamespaceName, tenantNamespaceName, workspaceNamespaceName } from '../model/naming.ts';
import { namespacedParent } from '../model/set-id.ts';
import type { CachedObject } from '../kube/informer.ts';

export interface ChildGuardConfig {
  /** Where the Tenants' MyDrive claims are rendered (`mydrivePvcsNamespace`). */
  mydrivePvcsNamespace: string;
}

const SANDBOX_PREFIX = sandboxNamespaceName('');

/**
 * The work-queue key of the parent that may have rendered `obj`, or undefined when none can: no
 * parent named, a parent kind the controller does not reconcile, or one whose set never renders
 * an object of that kind into that namespace.
 */
export function renderingParent(obj: CachedObject, config: ChildGuardConfig): string | undefined {
  const ns = obj.metadata.namespace;
  if (obj.kind === 'VirtualMachineInstance') {
    const instance = obj.metadata.labels?.[LABEL.instance];
    return instance && ns && !ns.startsWith(SANDBOX_PREFIX) ? `Instance/${ns}/${instance}` : undefined;
  }
  const key = obj.metadata.annotations?.[COMPOSER.parentAnnotation];
  if (!key) return undefined;
  const parts = key.split('/');
  const [kind] = parts;
  if (parts.length === 2 && parts[1]) {
    const name = parts[1];
    if (kind === 'Tenant') {
      if (ns === undefined || ns === tenantNamespaceName(name) || ns === config.mydrivePvcsNamespace) return key;
      return ns === sandboxNamespaceName(name) && SANDBOX_OBJECTS[obj.kind] === obj.metadata.name ? key : undefined;
    }
    if (kind === 'Workspace') return ns === undefined || ns === workspaceNamespaceName(name) ? key : undefined;
    return undefined;
  }
  // An Instance's, a snapshot's and a SharedVolume's set is rendered in their own namespace, never in a sandbox.
  if (parts.length === 3 && namespacedParent(kind) && parts[2]) {
    return ns !== undefined && ns === parts[1] && !ns.startsWith(SANDBOX_PREFIX) ? key : undefined;
  }
  return undefined;
}

/**
 * Whether a child informer keeps `obj`: a child some parent renders, or a submitter Job
 * (docs/behaviour.md §8.2), which the controller creates beside the Instance's set, outside it,
 * and finds by its owner Instance, not by a parent annotation.
 */
export function keptAsChild(obj: CachedObject, config: ChildGuardConfig): boolean {
  if (renderingParent(obj, config) !== undefined) return true;
  const ns = obj.metadata.namespace;
  return (
    obj.kind === 'Job' &&
    obj.metadata.labels?.[LABEL.component] === 'submitter' &&
    ns !== undefined &&
    !ns.startsWith(SANDBOX_PREFIX) &&
    (obj.metadata.ownerReferences ?? []).some((r) => r.controller && r.kind === 'Instance')
  );
}
