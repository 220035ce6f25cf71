import { isDeepStrictEqual } from 'node:util';
import { DEFAULT_API_LEVEL, type ApiLevel } from './api-level.ts';
import type { Source, SourcedObject } from './parse.ts';
import type { Problem } from './problems.ts';
import {
  objectKey,
  TEMPLATE_REF,
  TENANT_REF,
  WORKSPACE_REF,
  type ImageList,
  type InputObject,
  type Instance,
  type InstanceSnapshot,
  type Namespace,
  type Secret,
  type SharedVolume,
  type Template,
  type Tenant,
  type Workspace,
} from './types.ts';

/** What composing a set may read of the inputs beyond its parent. Inventory implements it. */
export interface InventoryLookups {
  /** The API level the objects hold (src/inputs/api-level.ts). */
  readonly level: ApiLevel;
  sourceOf(object: object): Source | undefined;
  templateOf(instance: Instance): Template | undefined;
  tenantOf(instance: Instance): Tenant | undefined;
  /** Tenants that are managers of a workspace, by name. */
  managersOf(workspaceName: string): readonly Tenant[];
  workspace(name: string): Workspace | undefined;
  template(namespace: string, name: string): Template | undefined;
  instance(namespace: string, name: string): Instance | undefined;
  namespace(name: string): Namespace | undefined;
  secret(namespace: string, name: string): Secret | undefined;
  sharedVolume(namespace: string, name: string): SharedVolume | undefined;
}

/**
 * The typed, validated set of input resources, with references resolved on demand.
 * Built from files (CLI, watch mode) or from the controller's caches: the same type in both cases.
 */
export class Inventory implements InventoryLookups {
  readonly tenants = new Map<string, Tenant>();
  readonly workspaces = new Map<string, Workspace>();
  readonly templates = new Map<string, Template>();
  readonly instances = new Map<string, Instance>();
  readonly snapshots = new Map<string, InstanceSnapshot>();
  readonly imageLists = new Map<string, ImageList>();
  /** e62be9e only. */
  readonly sharedVolumes = new Map<string, SharedVolume>();
  /** Namespaces as they are in the cluster (read for the namespace whitelist; never re-emitted). */
  readonly namespaces = new Map<string, Namespace>();
  /** Secrets as they are in the cluster (e.g. `mydrive-info`; never re-emitted). */
  readonly secrets = new Map<string, Secret>();
  private readonly sources = new WeakMap<object, Source>();
  private managersIndex?: Map<string, Tenant[]>;

  /** The API level the objects were validated at: what they hold, and the shape of what is rendered for them. */
  constructor(readonly level: ApiLevel = DEFAULT_API_LEVEL) {}

  /**
   * Templates (`namespace/name`) that were in the input but refused with an error of their own:
   * their Instances are not reported one by one as "not found" (see `templateUsers`).
   */
  private refusedTemplates: ReadonlySet<string> = new Set();
  /** Instances (keys) of each refused Template, filled by checkReferences. */
  readonly templateUsers = new Map<string, string[]>();

  /**
   * Adds objects. A second object with the same kind and key is dropped: silently when it is the
   * same object (deep-equal once read and defaulted), else reported as a duplicate naming both places.
   * `refusedTemplates`: see the field of that name.
   */
  static fromObjects(objects: readonly SourcedObject[], refusedTemplates?: ReadonlySet<string>, level: ApiLevel = DEFAULT_API_LEVEL): { inventory: Inventory; problems: Problem[] } {
    const inventory = new Inventory(level);
    if (refusedTemplates) inventory.refusedTemplates = refusedTemplates;
    const problems: Problem[] = [];
    for (const { object, source } of objects) {
      const map = inventory.mapFor(object);
      const key = objectKey(object);
      const previous = map.get(key);
      // The same object defined twice (as kubectl apply -f takes it) is one object: the first is kept.
      if (previous && isDeepStrictEqual(previous, object)) continue;
      if (previous) {
        const first = inventory.sources.get(previous);
        const differs = firstDifference(previous, object);
        problems.push({
          severity: 'error',
          file: source.file,
          document: source.document,
          ...source.locate?.('/metadata/name'),
          kind: object.kind,
          name: key,
          field: 'metadata.name',
          message: `duplicate ${object.kind} "${key}"${first ? ` (first defined in ${first.file}, document ${first.document})` : ''}${differs ? `, differing at ${differs}` : ''}`,
        });
        continue;
      }
      map.set(key, object);
      inventory.sources.set(object, source);
    }
    problems.push(...inventory.checkReferences());
    return { inventory, problems };
  }

  /** Puts (or replaces) one object; used by the controller's caches and watch mode. */
  upsert(object: InputObject, source?: Source): void {
    this.mapFor(object).set(objectKey(object), object);
    if (source) this.sources.set(object, source);
  }

  // Only a Tenant change drops the managers index (`mapFor`): the controller upserts an Instance
  // with every status write, and rebuilding (sorting every Tenant) per reconcile was measurable.
  remove(object: Pick<InputObject, 'kind' | 'metadata'>): void {
    this.mapFor(object as InputObject).delete(objectKey(object));
  }

  /** Every object held, in a stable order (kinds, then keys as inserted). */
  allObjects(): InputObject[] {
    const maps: Map<string, InputObject>[] = [this.workspaces, this.tenants, this.templates, this.instances, this.snapshots, this.imageLists, this.sharedVolumes, this.namespaces, this.secrets] as Map<string, InputObject>[];
    return maps.flatMap((m) => [...m.values()]);
  }

  sourceOf(object: object): Source | undefined {
    return this.sources.get(object);
  }

  templateOf(instance: Instance): Template | undefined {
    const ref = instance.spec[TEMPLATE_REF];
    return ref.namespace ? this.templates.get(`${ref.namespace}/${ref.name}`) : undefined;
  }

  tenantOf(instance: Instance): Tenant | undefined {
    // The Tenant is cluster-scoped: the reference's namespace is ignored, as upstream does.
    return this.tenants.get(instance.spec[TENANT_REF].name);
  }

  workspace(name: string): Workspace | undefined {
    return this.workspaces.get(name);
  }

  template(namespace: string, name: string): Template | undefined {
    return this.templates.get(`${namespace}/${name}`);
  }

  instance(namespace: string, name: string): Instance | undefined {
    return this.instances.get(`${namespace}/${name}`);
  }

  namespace(name: string): Namespace | undefined {
    return this.namespaces.get(name);
  }

  secret(namespace: string, name: string): Secret | undefined {
    return this.secrets.get(`${namespace}/${name}`);
  }

  sharedVolume(namespace: string, name: string): SharedVolume | undefined {
    return this.sharedVolumes.get(`${namespace}/${name}`);
  }

  workspaceOf(template: Template): Workspace | undefined {
    const ref = template.spec[WORKSPACE_REF];
    return ref ? this.workspaces.get(ref.name) : undefined;
  }

  /** Tenants that are managers of a workspace (docs/behaviour.md §7.4: their keys go into every VM of it). */
  managersOf(workspaceName: string): readonly Tenant[] {
    if (!this.managersIndex) {
      const index = new Map<string, Tenant[]>();
      for (const tenant of [...this.tenants.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))) {
        for (const ws of tenant.spec.workspaces ?? []) {
          if (ws.role !== 'manager') continue;
          const list = index.get(ws.name) ?? [];
          list.push(tenant);
          index.set(ws.name, list);
        }
      }
      this.managersIndex = index;
    }
    return this.managersIndex.get(workspaceName) ?? [];
  }

  /** Problems with references between inputs: errors for what an Instance needs, warnings otherwise. */
  checkReferences(): Problem[] {
    const problems: Problem[] = [];
    this.templateUsers.clear();
    const about = (obj: InputObject, pointer: string, field: string) => {
      const src = this.sources.get(obj);
      return {
        file: src?.file,
        document: src?.document,
        ...src?.locate?.(pointer),
        kind: obj.kind,
        name: objectKey(obj),
        field,
      };
    };
    for (const instance of this.instances.values()) {
      const tref = instance.spec[TEMPLATE_REF];
      if (!tref.namespace) {
        problems.push({ severity: 'error', ...about(instance, `/spec/${esc(TEMPLATE_REF)}`, `spec["${TEMPLATE_REF}"].namespace`), message: 'required: Templates are namespaced' });
      } else if (!this.templateOf(instance) && this.refusedTemplates.has(`${tref.namespace}/${tref.name}`)) {
        // One broken Template is one error (its own), not one more per Instance that uses it.
        const key = `${tref.namespace}/${tref.name}`;
        this.templateUsers.set(key, [...(this.templateUsers.get(key) ?? []), objectKey(instance)]);
      } else if (!this.templateOf(instance)) {
        problems.push({ severity: 'error', ...about(instance, `/spec/${esc(TEMPLATE_REF)}/name`, `spec["${TEMPLATE_REF}"]`), message: `Template ${tref.namespace}/${tref.name} not found` });
      }
      if (!this.tenantOf(instance)) {
        problems.push({ severity: 'error', ...about(instance, `/spec/${esc(TENANT_REF)}/name`, `spec["${TENANT_REF}"]`), message: `Tenant ${instance.spec[TENANT_REF].name} not found` });
      }
    }
    for (const template of this.templates.values()) {
      const ref = template.spec[WORKSPACE_REF];
      if (ref && !this.workspaces.has(ref.name)) {
        problems.push({ severity: 'warning', ...about(template, `/spec/${esc(WORKSPACE_REF)}/name`, `spec["${WORKSPACE_REF}"].name`), message: `Workspace ${ref.name} not found` });
      }
      const names = new Set<string>();
      template.spec.environmentList.forEach((env, i) => {
        if (names.has(env.name)) {
          problems.push({ severity: 'error', ...about(template, `/spec/environmentList/${i}/name`, `spec.environmentList[${i}].name`), message: `duplicate environment name "${env.name}"` });
        }
        names.add(env.name);
      });
      if (template.spec.environmentList.length === 0) {
        problems.push({ severity: 'error', ...about(template, '/spec/environmentList', 'spec.environmentList'), message: 'a Template needs at least one environment' });
      }
    }
    for (const tenant of this.tenants.values()) {
      (tenant.spec.workspaces ?? []).forEach((ws, i) => {
        if (!this.workspaces.has(ws.name)) {
          problems.push({ severity: 'warning', ...about(tenant, `/spec/workspaces/${i}/name`, `spec.workspaces[${i}].name`), message: `Workspace ${ws.name} not found (reported in status.failingWorkspaces)` });
        }
      });
    }
    // A snapshot's references are checked by compose (validateSnapshotRequest), like the controller does.
    return problems;
  }

  private mapFor(object: InputObject): Map<string, InputObject> {
    switch (object.kind) {
      case 'Tenant':
        this.managersIndex = undefined;
        return this.tenants as Map<string, InputObject>;
      case 'Workspace':
        return this.workspaces as Map<string, InputObject>;
      case 'Template':
        return this.templates as Map<string, InputObject>;
      case 'Instance':
        return this.instances as Map<string, InputObject>;
      case 'InstanceSnapshot':
        return this.snapshots as Map<string, InputObject>;
      case 'ImageList':
        return this.imageLists as Map<string, InputObject>;
      case 'SharedVolume':
        return this.sharedVolumes as Map<string, InputObject>;
      case 'Namespace':
        return this.namespaces as Map<string, InputObject>;
      case 'Secret':
        return this.secrets as Map<string, InputObject>;
    }
  }
}

/** The first field (`spec.quota.cpu`, `spec.workspaces[1]`) where two objects read differ, if any. */
function firstDifference(a: unknown, b: unknown, path = ''): string | undefined {
  if (isDeepStrictEqual(a, b)) return undefined;
  const objA = typeof a === 'object' && a !== null;
  const objB = typeof b === 'object' && b !== null;
  if (!objA || !objB || Array.isArray(a) !== Array.isArray(b)) return path || '(the whole object)';
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ra), ...Object.keys(rb)])) {
    const at = Array.isArray(a) ? `${path}[${k}]` : /^[A-Za-z_][\w-]*$/.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`;
    const d = firstDifference(ra[k], rb[k], at);
    if (d) return d;
  }
  return path || '(the whole object)';
}

function esc(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}
