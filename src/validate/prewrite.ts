/**
 * Checks every sink runs on the rendered sets before it writes anything: no two resource sets (and
 * no set twice) render the same object. Two Instances `my.inst` and `my-inst` of one namespace, or
 * two Tenants `a.b` and `a-b`, render the same names: the last one written would silently win
 * (a shared MyDrive PVC, a Deployment flipping between two Templates), and the gitops tree would
 * keep one file of the two.
 *
 * A set's part of the check (`checkSetObjects`) is computed where the set is rendered (render
 * workers included) and kept small; the collisions need every set and are found afterwards.
 */
import type { Inventory } from '../api/inventory.ts';
import type { Source } from '../api/parse.ts';
import type { Problem } from '../api/problems.ts';
import type { InputObject } from '../api/types.ts';
import type { RenderedSet } from '../compose/compose.ts';
import { parentKey, type ParentRef } from '../model/labels.ts';

interface Identified {
  kind: string;
  metadata: { name: string; namespace?: string };
}

/** What the API server tells objects apart by: kind, namespace, name (`Kind/namespace/name`). */
export function objectIdentity(o: Identified): string {
  return `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
}

/** `Kind namespace/name` of an identity, as messages show it. */
export function showIdentity(id: string): string {
  const [kind, namespace, name] = id.split('/');
  return `${kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

/** One set's part of the checks, small enough to pass between threads. */
export interface SetCheck {
  /** Identities of the set's objects, in order. */
  ids: string[];
}

export function checkSetObjects(objects: readonly Identified[]): SetCheck {
  return { ids: objects.map(objectIdentity) };
}

export interface CheckedSet {
  unit: { id: string; parent: ParentRef };
  check: SetCheck;
}

/** Where an input parent was read (file and document), when the inventory knows. */
export function parentSource(inventory: Inventory, parent: ParentRef): Source | undefined {
  const key = parent.namespace ? `${parent.namespace}/${parent.name}` : parent.name;
  const maps: Partial<Record<ParentRef['kind'], Map<string, InputObject>>> = {
    Instance: inventory.instances,
    Tenant: inventory.tenants,
    Workspace: inventory.workspaces,
    InstanceSnapshot: inventory.snapshots,
  };
  const object = maps[parent.kind]?.get(key);
  return object ? inventory.sourceOf(object) : undefined;
}

/** The problems of fully rendered sets (objects in hand). */
export function checkRenderedSets(sets: readonly RenderedSet[], sourceOf?: (parent: ParentRef) => Source | undefined): Problem[] {
  return renderedSetProblems(
    sets.map((s) => ({ unit: s.unit, check: checkSetObjects(s.objects) })),
    sourceOf,
  );
}

const SHOWN = 5;

/**
 * Every collision among the sets, one error per pair of sets (reported on the later one, naming
 * the earlier one's input) and per set that renders an object twice.
 */
export function renderedSetProblems(sets: Iterable<CheckedSet>, sourceOf?: (parent: ParentRef) => Source | undefined): Problem[] {
  const all = [...sets];
  const owner = new Map<string, number>();
  // Per later set: the earlier sets it collides with, and the objects; objects it renders twice.
  const clashes = new Map<number, Map<number, string[]>>();
  const twice = new Map<number, string[]>();
  all.forEach((set, i) => {
    for (const id of set.check.ids) {
      const first = owner.get(id);
      if (first === undefined) owner.set(id, i);
      else if (first === i) twice.set(i, [...(twice.get(i) ?? []), id]);
      else {
        let byFirst = clashes.get(i);
        if (!byFirst) clashes.set(i, (byFirst = new Map()));
        byFirst.set(first, [...(byFirst.get(first) ?? []), id]);
      }
    }
  });
  const problems: Problem[] = [];
  const where = (i: number): Pick<Problem, 'file' | 'document' | 'kind' | 'name'> => {
    const p = all[i].unit.parent;
    const src = sourceOf?.(p);
    return { file: src?.file ?? all[i].unit.id, document: src?.document, kind: p.kind, name: p.namespace ? `${p.namespace}/${p.name}` : p.name };
  };
  const list = (ids: string[]) => ids.slice(0, SHOWN).map(showIdentity).join(', ') + (ids.length > SHOWN ? `, … (${ids.length - SHOWN} more)` : '');
  for (const i of [...new Set([...clashes.keys(), ...twice.keys()])].sort((a, b) => a - b)) {
    for (const [first, ids] of clashes.get(i) ?? []) {
      const other = where(first);
      const at = other.document !== undefined ? `${other.file}, document ${other.document}` : other.file;
      problems.push({
        severity: 'error',
        ...where(i),
        message:
          `renders ${ids.length === 1 ? 'an object' : `${ids.length} objects`} that ${parentKey(all[first].unit.parent)} (${at}) renders too: ${list(ids)}. ` +
          'Only one of them can exist, and the last one written would silently replace the other: rename one of the two',
      });
    }
    const dup = twice.get(i);
    if (dup) problems.push({ severity: 'error', ...where(i), message: `renders the same object twice: ${list([...new Set(dup)])}` });
  }
  return problems;
}
