/*
 * The lookups a composition makes in an Inventory, and a recorder of them: the keys a resource set
 * was built from are its dependencies (render cache key, watch mode, the controller's fan-out).
 */
import type { ApiLevel } from './api-level.ts';
import type { Inventory, InventoryLookups } from './inventory.ts';
import type { Source } from './parse.ts';
import { TEMPLATE_REF, TENANT_REF, type Instance, type Namespace, type Secret, type SharedVolume, type Template, type Tenant, type Workspace } from './types.ts';

/**
 * The key of "the managers of a workspace": a Tenant that manages `workspace` (before or after a
 * change) answers to it, so a Tenant that becomes a manager re-renders the workspace's Instances.
 * `#` cannot occur in a Kubernetes name: no object key collides with it.
 */
export function managersKey(workspace: string): string {
  return `Workspace/${workspace}#managers`;
}

/**
 * The key of "the Instances asking for public exposure" (docs/behaviour.md §18): the file sinks
 * allocate them all in one order, so each one's set depends on the others. An Instance that asks
 * or holds an allocation in its status, and a Template allowing it, answer to it (before or after
 * a change), so one starting to ask re-renders those it may take ports from.
 */
export const PUBLIC_EXPOSURE_KEY = 'Instance#public-exposure';

/**
 * Looks up through an Inventory and notes the key (`Kind/namespace/name`) of every lookup, found
 * or not: a Template looked up and missing is a dependency, so its creation re-renders the set.
 */
export class RecordedLookups implements InventoryLookups {
  readonly keys = new Set<string>();

  constructor(
    private readonly inventory: Inventory,
    /** The parent's own key: always a dependency. */
    ownKey: string,
  ) {
    this.keys.add(ownKey);
  }

  /** Notes a key read outside the Inventory (e.g. compose's own tables). */
  note(key: string): void {
    this.keys.add(key);
  }

  /** The recorded keys, sorted: the same lookups give the same list, whatever their order. */
  sorted(): string[] {
    return [...this.keys].sort();
  }

  get level(): ApiLevel {
    return this.inventory.level;
  }

  sourceOf(object: object): Source | undefined {
    return this.inventory.sourceOf(object);
  }

  templateOf(instance: Instance): Template | undefined {
    const ref = instance.spec[TEMPLATE_REF];
    if (ref.namespace) this.keys.add(`Template/${ref.namespace}/${ref.name}`);
    return this.inventory.templateOf(instance);
  }

  tenantOf(instance: Instance): Tenant | undefined {
    this.keys.add(`Tenant/${instance.spec[TENANT_REF].name}`);
    return this.inventory.tenantOf(instance);
  }

  managersOf(workspaceName: string): readonly Tenant[] {
    this.keys.add(managersKey(workspaceName));
    const managers = this.inventory.managersOf(workspaceName);
    for (const m of managers) this.keys.add(`Tenant/${m.metadata.name}`);
    return managers;
  }

  workspace(name: string): Workspace | undefined {
    this.keys.add(`Workspace/${name}`);
    return this.inventory.workspace(name);
  }

  template(namespace: string, name: string): Template | undefined {
    this.keys.add(`Template/${namespace}/${name}`);
    return this.inventory.template(namespace, name);
  }

  instance(namespace: string, name: string): Instance | undefined {
    this.keys.add(`Instance/${namespace}/${name}`);
    return this.inventory.instance(namespace, name);
  }

  namespace(name: string): Namespace | undefined {
    this.keys.add(`Namespace/${name}`);
    return this.inventory.namespace(name);
  }

  secret(namespace: string, name: string): Secret | undefined {
    this.keys.add(`Secret/${namespace}/${name}`);
    return this.inventory.secret(namespace, name);
  }

  sharedVolume(namespace: string, name: string): SharedVolume | undefined {
    this.keys.add(`SharedVolume/${namespace}/${name}`);
    return this.inventory.sharedVolume(namespace, name);
  }
}
