import type { ParentRef } from './labels.ts';

const UNIT_FOLDER: Partial<Record<ParentRef['kind'], string>> = { Workspace: 'workspaces', Tenant: 'tenants', Instance: 'instances', InstanceSnapshot: 'snapshots', SharedVolume: 'sharedvolumes' };

const NAMESPACED: ReadonlySet<string> = new Set(['Instance', 'InstanceSnapshot', 'SharedVolume']);

/** Parent kinds whose objects, and sets, live in a namespace. */
export function namespacedParent(kind: string): boolean {
  return NAMESPACED.has(kind);
}

/** The id of a parent's set: `workspaces/<name>`, `tenants/<name>`, `instances/<ns>/<name>`, `snapshots/<ns>/<name>`, `sharedvolumes/<ns>/<name>`. */
export function unitId(parent: ParentRef): string {
  if (!UNIT_FOLDER[parent.kind]) throw new Error(`no resource set of a ${parent.kind}`);
  return namespacedParent(parent.kind) ? `${UNIT_FOLDER[parent.kind]}/${parent.namespace ?? ''}/${parent.name}` : `${UNIT_FOLDER[parent.kind]}/${parent.name}`;
}
