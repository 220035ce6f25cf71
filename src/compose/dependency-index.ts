/*
 * Dependencies as data: each resource set depends on the input keys its composition looked up
 * (`RecordedLookups`), and one index answers "which sets does this input change concern". Watch
 * mode (incremental.ts) and the controller's fan-out both read it; the render cache hashes the
 * same keys.
 */
import { managersKey, PUBLIC_EXPOSURE_KEY } from '../inputs/lookups.ts';
import { objectKey } from '../inputs/types.ts';
import { tenantNamespaceName } from '../model/naming.ts';

/**
 * The key of "the Tenant whose personal namespace this is": compose reads a namespace's labels
 * from that Tenant when the namespace itself is not among the inputs (files).
 */
export function namespaceTenantKey(namespace: string): string {
  return `Namespace/${namespace}#tenant`;
}

/**
 * The keys an input object answers to in lookups: its own `Kind/namespace/name`, for a Tenant
 * the managers of each workspace it manages and its personal namespace's labels, and
 * PUBLIC_EXPOSURE_KEY for the Instances and Templates that take part in public exposure. A change of the
 * object concerns the sets depending on any of these keys, of its version before or after.
 * Tolerates an object that failed validation (the controller's raw cached copy).
 */
export function lookupKeysOf(kind: string, object: { metadata: { name: string; namespace?: string }; spec?: unknown; status?: unknown }): string[] {
  const keys = [`${kind}/${objectKey(object)}`];
  if (kind === 'Tenant') {
    const workspaces = (object.spec as { workspaces?: unknown } | undefined)?.workspaces;
    for (const ws of Array.isArray(workspaces) ? (workspaces as { name?: unknown; role?: unknown }[]) : []) {
      if (ws?.role === 'manager' && typeof ws.name === 'string') keys.push(managersKey(ws.name));
    }
    keys.push(namespaceTenantKey(tenantNamespaceName(object.metadata.name)));
  }
  if (takesPartInPublicExposure(kind, object)) keys.push(PUBLIC_EXPOSURE_KEY);
  return keys;
}

function takesPartInPublicExposure(kind: string, object: { spec?: unknown; status?: unknown }): boolean {
  if (kind === 'Template') return (object.spec as { allowPublicExposure?: unknown } | undefined)?.allowPublicExposure === true;
  if (kind !== 'Instance') return false;
  const ports = (object.spec as { publicExposure?: { ports?: unknown } } | undefined)?.publicExposure?.ports;
  return (Array.isArray(ports) && ports.length > 0) || !!(object.status as { publicExposure?: unknown } | undefined)?.publicExposure;
}

/** Input key → the dependents (set ids, or parent keys) whose last composition looked it up. */
export class DependencyIndex {
  private readonly dependents = new Map<string, Set<string>>();
  private readonly keysOf = new Map<string, readonly string[]>();

  /** Replaces what `dependent` depends on. */
  set(dependent: string, keys: Iterable<string>): void {
    this.remove(dependent);
    const list = [...new Set(keys)];
    this.keysOf.set(dependent, list);
    for (const key of list) {
      let ids = this.dependents.get(key);
      if (!ids) this.dependents.set(key, (ids = new Set()));
      ids.add(dependent);
    }
  }

  remove(dependent: string): void {
    for (const key of this.keysOf.get(dependent) ?? []) {
      const ids = this.dependents.get(key);
      ids?.delete(dependent);
      if (ids?.size === 0) this.dependents.delete(key);
    }
    this.keysOf.delete(dependent);
  }

  /** The dependents of any of these keys. */
  dependentsOf(keys: Iterable<string>): Set<string> {
    const out = new Set<string>();
    for (const key of keys) for (const id of this.dependents.get(key) ?? []) out.add(id);
    return out;
  }

  /** What a dependent was last recorded to depend on. */
  dependenciesOf(dependent: string): readonly string[] | undefined {
    return this.keysOf.get(dependent);
  }

  clear(): void {
    this.dependents.clear();
    this.keysOf.clear();
  }
}
