/**
 * Checks every sink runs on the rendered sets before it writes anything:
 *
 * - no two resource sets (and no set twice) render the same object. Two Instances `my.inst` and
 *   `my-inst` of one namespace, or two Tenants `a.b` and `a-b`, render the same names: the last one
 *   written would silently win (a shared MyDrive PVC, a Deployment flipping between two Templates),
 *   and the gitops tree would keep one file of the two;
 * - every object passes the API server's ObjectMeta rules, the ones inputs can break: names by
 *   kind (DNS-1123 label, subdomain, RBAC path segment), namespaces, label keys and values (63
 *   characters: a long Instance name), annotation keys, plus pod-template and selector labels and
 *   Ingress hosts. These are the rules of `crownlabs validate` (src/model/api-server-rules.ts) that cost next to
 *   nothing; the full OpenAPI schema check costs about as much as rendering and stays there.
 *
 * A set's part of the check (`checkSetObjects`) is computed where the set is rendered (render
 * workers included) and kept small; the collisions need every set and are found afterwards.
 */
import type { Inventory } from '../inputs/inventory.ts';
import type { Source } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import type { InputObject } from '../inputs/types.ts';
import type { RenderedSet } from './compose.ts';
import { parentKey, type ParentRef } from '../model/labels.ts';
import { outranks } from '../model/set-precedence.ts';
import { isDns1123Label, isDns1123Subdomain, isLabelValue, isQualifiedName } from '../inputs/k8s-names.ts';
import { nameProblem, NAME_MESSAGES, negativeQuantityIssues, resourceRequirementIssues } from '../model/api-server-rules.ts';

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
  /** What the API server would refuse in single objects (identity, field path, message). */
  issues: { object: string; field: string; message: string }[];
}

export function checkSetObjects(objects: readonly Identified[]): SetCheck {
  const issues: SetCheck['issues'] = [];
  for (const o of objects) {
    for (const issue of objectIssues(o)) issues.push({ object: objectIdentity(o), ...issue });
  }
  return { ids: objects.map(objectIdentity), issues };
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The cheap ObjectMeta rules of the API server on one object: `[]` when it passes them. */
export function objectIssues(object: Identified): { field: string; message: string }[] {
  const out: { field: string; message: string }[] = [];
  const o = object as unknown as Obj;
  const meta = isObj(o.metadata) ? o.metadata : {};
  const name = meta.name;
  if (typeof name !== 'string' || name === '') out.push({ field: 'metadata.name', message: 'required value is missing' });
  else {
    const problem = nameProblem(String(o.apiVersion), String(o.kind), name);
    if (problem) out.push({ field: 'metadata.name', message: `invalid name ${JSON.stringify(name)}: ${problem}` });
  }
  if (typeof meta.namespace === 'string' && meta.namespace !== '' && !isDns1123Label(meta.namespace)) {
    out.push({ field: 'metadata.namespace', message: `invalid namespace ${JSON.stringify(meta.namespace)}: ${NAME_MESSAGES.dns1123Label}` });
  }
  labels(meta.labels, 'metadata.labels', out);
  if (isObj(meta.annotations)) {
    let size = 0;
    for (const [k, v] of Object.entries(meta.annotations)) {
      if (!isGoodKey(k.toLowerCase())) out.push({ field: `metadata.annotations[${JSON.stringify(k)}]`, message: `invalid annotation key ${JSON.stringify(k)}: must be a qualified name` });
      size += k.length + (typeof v === 'string' ? v.length : 0);
    }
    if (size > 256 * 1024) out.push({ field: 'metadata.annotations', message: `too long: must have at most 262144 bytes (has ${size})` });
  }
  const spec = isObj(o.spec) ? o.spec : {};
  const template = isObj(spec.template) && isObj(spec.template.metadata) ? spec.template.metadata : {};
  labels(template.labels, 'spec.template.metadata.labels', out);
  if (isObj(spec.selector)) {
    // A Service's selector is a label map; a workload's is a LabelSelector.
    labels(o.kind === 'Service' ? spec.selector : spec.selector.matchLabels, o.kind === 'Service' ? 'spec.selector' : 'spec.selector.matchLabels', out);
  }
  // Container names come from Template environment names: the API server wants DNS labels.
  const podSpec = o.kind === 'Pod' ? spec : isObj(spec.template) && isObj(spec.template.spec) ? spec.template.spec : {};
  const podAt = o.kind === 'Pod' ? 'spec' : 'spec.template.spec';
  for (const list of ['initContainers', 'containers'] as const) {
    (Array.isArray(podSpec[list]) ? podSpec[list] : []).forEach((c, i) => {
      const cname = isObj(c) ? c.name : undefined;
      if (typeof cname === 'string' && !isDns1123Label(cname)) out.push({ field: `${podAt}.${list}[${i}].name`, message: `invalid value ${JSON.stringify(cname)}: ${NAME_MESSAGES.dns1123Label}` });
      if (isObj(c)) resourceRequirementIssues(c.resources, false, (segments, message) => out.push({ field: `${podAt}.${list}[${i}].resources.${segments.join('.')}`, message }));
    });
  }
  if (o.kind === 'ResourceQuota') negativeQuantityIssues(spec.hard, (segments, message) => out.push({ field: `spec.hard[${JSON.stringify(segments[0])}]`, message }));
  if (o.kind === 'PersistentVolumeClaim') resourceRequirementIssues(spec.resources, true, (segments, message) => out.push({ field: `spec.resources.${segments.join('.')}`, message }));
  if (o.kind === 'Ingress') {
    (Array.isArray(spec.rules) ? spec.rules : []).forEach((r, i) => {
      if (isObj(r) && typeof r.host === 'string' && !isIngressHost(r.host)) out.push({ field: `spec.rules[${i}].host`, message: `invalid host ${JSON.stringify(r.host)}: ${NAME_MESSAGES.dns1123Subdomain}, not an IP address` });
    });
    (Array.isArray(spec.tls) ? spec.tls : []).forEach((t, i) => {
      (isObj(t) && Array.isArray(t.hosts) ? t.hosts : []).forEach((h, j) => {
        if (typeof h === 'string' && !isIngressHost(h)) out.push({ field: `spec.tls[${i}].hosts[${j}]`, message: `invalid host ${JSON.stringify(h)}: ${NAME_MESSAGES.dns1123Subdomain}` });
      });
    });
  }
  return out;
}

// Keys repeat on every object (a few dozen distinct ones): each is checked once.
const goodKeys = new Set<string>();
function isGoodKey(k: string): boolean {
  if (goodKeys.has(k)) return true;
  if (!isQualifiedName(k)) return false;
  if (goodKeys.size < 10_000) goodKeys.add(k);
  return true;
}

function labels(map: unknown, at: string, out: { field: string; message: string }[]): void {
  if (!isObj(map)) return;
  for (const k in map) {
    const v = map[k];
    if (isGoodKey(k) && typeof v === 'string' && isLabelValue(v)) continue;
    const field = `${at}[${JSON.stringify(k)}]`;
    if (!isGoodKey(k)) out.push({ field, message: `invalid label key ${JSON.stringify(k)}: must be a qualified name ([prefix/]name, name at most 63 characters)` });
    if (typeof v !== 'string' || !isLabelValue(v)) {
      out.push({ field, message: `invalid label value ${JSON.stringify(v)}: at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character` });
    }
  }
}

function isIngressHost(h: string): boolean {
  return !/^\d+\.\d+\.\d+\.\d+$/.test(h) && (h.startsWith('*.') ? isDns1123Subdomain(h.slice(2)) : isDns1123Subdomain(h));
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
    SharedVolume: inventory.sharedVolumes,
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

/** Only the collisions of fully rendered sets (`validate` checks single objects in full itself). */
export function collisionProblems(sets: readonly RenderedSet[], sourceOf?: (parent: ParentRef) => Source | undefined): Problem[] {
  return renderedSetProblems(
    sets.map((s) => ({ unit: s.unit, check: { ids: s.objects.map(objectIdentity), issues: [] } })),
    sourceOf,
  );
}

const SHOWN = 5;

/**
 * Every collision among the sets, one error per pair of sets (reported on the set refused, naming
 * the other one's input: the later one, unless it outranks the earlier one, src/model/set-precedence.ts)
 * and per set that renders an object twice.
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
        // The set refused is the later one, unless it outranks the earlier one (a Tenant's over an Instance's).
        const [refused, kept] = outranks(all[i].unit.parent.kind, all[first].unit.parent.kind) ? [first, i] : [i, first];
        if (refused === first) owner.set(id, i);
        let byKept = clashes.get(refused);
        if (!byKept) clashes.set(refused, (byKept = new Map()));
        byKept.set(kept, [...(byKept.get(kept) ?? []), id]);
      }
    }
  });
  const problems: Problem[] = [];
  const where = (i: number): Pick<Problem, 'file' | 'document' | 'kind' | 'name'> => {
    const p = all[i].unit.parent;
    const src = sourceOf?.(p);
    return { file: src?.file ?? all[i].unit.id, document: src?.document, kind: p.kind, name: p.namespace ? `${p.namespace}/${p.name}` : p.name };
  };
  all.forEach((set, i) => {
    if (set.check.issues.length === 0) return;
    const at = where(i);
    const from = `rendered for ${parentKey(set.unit.parent)}`;
    for (const issue of set.check.issues) {
      const [kind, namespace, name] = issue.object.split('/');
      problems.push({ severity: 'error', file: at.file, document: at.document, kind, name: namespace ? `${namespace}/${name}` : name, field: issue.field, message: `${issue.message} (${from})` });
    }
  });
  const list = (ids: string[]) => ids.slice(0, SHOWN).map(showIdentity).join(', ') + (ids.length > SHOWN ? `, … (${ids.length - SHOWN} more)` : '');
  for (const i of [...new Set([...clashes.keys(), ...twice.keys()])].sort((a, b) => a - b)) {
    for (const [kept, ids] of clashes.get(i) ?? []) {
      const other = where(kept);
      const at = other.document !== undefined ? `${other.file}, document ${other.document}` : other.file;
      const mine = all[i].unit.parent;
      const theirs = all[kept].unit.parent;
      problems.push({
        severity: 'error',
        ...where(i),
        message:
          `renders ${ids.length === 1 ? 'an object' : `${ids.length} objects`} that ${parentKey(theirs)} (${at}) renders too: ${list(ids)}. ` +
          (outranks(theirs.kind, mine.kind)
            ? `${theirs.kind} objects take precedence over ${mine.kind} objects: this ${mine.kind}'s set is refused; rename it`
            : 'Only one of them can exist, and the last one written would silently replace the other: rename one of the two'),
      });
    }
    const dup = twice.get(i);
    if (dup) problems.push({ severity: 'error', ...where(i), message: `renders the same object twice: ${list([...new Set(dup)])}` });
  }
  return problems;
}
