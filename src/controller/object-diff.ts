/**
 * How `crownlabs diff` compares a live object with the answer of a server-side dry-run apply: pure
 * functions, no I/O. The printed sides follow `kubectl diff` (managedFields left out, Secret values
 * masked); the changed field paths, takeover and danger flags are what kubectl does not say.
 */
import { FIELD_MANAGER } from '../kube/objects.ts';

export type Obj = Record<string, unknown> & { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; [k: string]: unknown } };

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
}

/** kubectl diff's file name of an object: `[group.]version.Kind.namespace.name` (`v1.Namespace..x`). */
export function kubectlFileName(o: Pick<Obj, 'apiVersion' | 'kind' | 'metadata'>): string {
  const [group, version] = o.apiVersion.includes('/') ? o.apiVersion.split('/') : ['', o.apiVersion];
  return `${group ? `${group}.` : ''}${version}.${o.kind}.${o.metadata.namespace ?? ''}.${o.metadata.name}`;
}

/** The object without `metadata.managedFields`, as kubectl diff prints it (a copy). */
export function withoutManagedFields<T extends Obj | undefined>(o: T): T {
  if (!o) return o;
  const copy = structuredClone(o) as Obj;
  delete copy.metadata.managedFields;
  return copy as T;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Secret values replaced as kubectl diff does: `***` when equal, `*** (before)` / `*** (after)`
 * when changed, so a diff shows which key changes and never its value. Beyond kubectl, `stringData`
 * and a Secret's last-applied-configuration annotation (which holds the values in clear) are
 * masked too. Other kinds come back unchanged; the inputs are not modified.
 */
export function maskSecrets<A extends Obj | undefined, B extends Obj | undefined>(live: A, merged: B): [A, B] {
  const kind = (live ?? merged)?.kind;
  if (kind !== 'Secret') return [live, merged];
  const a = live && (structuredClone(live) as Obj);
  const b = merged && (structuredClone(merged) as Obj);
  const mask = (from: Record<string, unknown> | undefined, to: Record<string, unknown> | undefined) => {
    const has = (m: Record<string, unknown> | undefined, k: string) => !!m && Object.hasOwn(m, k);
    for (const k of Object.keys(from ?? {})) {
      if (has(to, k)) {
        const changed = JSON.stringify(from![k]) !== JSON.stringify(to![k]);
        from![k] = changed ? '*** (before)' : '***';
        to![k] = changed ? '*** (after)' : '***';
      } else from![k] = '***';
    }
    for (const k of Object.keys(to ?? {})) if (!has(from, k)) to![k] = '***';
  };
  for (const field of ['data', 'stringData'] as const) {
    mask(a?.[field] as Record<string, unknown> | undefined, b?.[field] as Record<string, unknown> | undefined);
  }
  const annotations = (o: Obj | undefined) => {
    const ann = o?.metadata.annotations as Record<string, unknown> | undefined;
    return ann && LAST_APPLIED in ann ? ann : undefined;
  };
  const [annA, annB] = [annotations(a), annotations(b)];
  if (annA || annB) {
    const pick = (ann: Record<string, unknown> | undefined) => (ann ? { [LAST_APPLIED]: ann[LAST_APPLIED] } : undefined);
    const [pa, pb] = [pick(annA), pick(annB)];
    mask(pa, pb);
    if (annA) annA[LAST_APPLIED] = pa![LAST_APPLIED];
    if (annB) annB[LAST_APPLIED] = pb![LAST_APPLIED];
  }
  return [a as A, b as B];
}

/**
 * Metadata the server changes on every write, and the status, which other components write (an
 * apply of the object never changes it): not a change the write makes. A status that moved
 * between the read of the live object and the dry-run answer is no change of ours.
 */
const BOOKKEEPING = new Set(['metadata.managedFields', 'metadata.resourceVersion', 'metadata.generation', 'status']);
const KEYED = new Set(['metadata.labels', 'metadata.annotations']);

/**
 * The leaf paths where `merged` differs from `live` (`spec.template.spec.containers[0].image`,
 * `metadata.labels["app.kubernetes.io/name"]`), in document order, bookkeeping metadata and status excepted.
 * Written here rather than from a JSON-patch diff: a patch's `/0/` cannot tell a list index from a
 * map key, and these paths are printed for people.
 */
export function changedPaths(live: unknown, merged: unknown): string[] {
  const out: string[] = [];
  const walk = (a: unknown, b: unknown, path: string) => {
    if (BOOKKEEPING.has(path)) return;
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], `${path}[${i}]`);
      return;
    }
    if (isMap(a) && isMap(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], join(path, k));
      return;
    }
    // Labels or annotations added or removed whole are named key by key (the annotation a first write adds).
    if (KEYED.has(path) && (isMap(a) || isMap(b)) && (a === undefined || b === undefined)) {
      walk(a ?? {}, b ?? {}, path);
      return;
    }
    if (!deepEqual(a, b)) out.push(path || '.');
  };
  walk(live, merged, '');
  return out;
}

function join(path: string, key: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${JSON.stringify(key)}]`;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a)) {
    if (!isMap(b)) return false;
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The danger of applying `merged` over `live`, or undefined when it deletes or restarts no pod or
 * VMI: a Deployment scaled down (its pods are deleted, with their emptyDir data) or whose pod
 * template changes (a new ReplicaSet replaces the pods), a VirtualMachine stopped (KubeVirt deletes
 * its VMI) or whose template changes (the VMI is re-created from it), any change of a
 * VirtualMachineInstance's spec (the running VM is replaced). Several reasons are joined with `; `.
 */
export function restartReason(live: Obj | undefined, merged: Obj | undefined): string | undefined {
  if (!live || !merged) return undefined;
  const at = (o: Obj, ...path: string[]) => path.reduce<unknown>((v, k) => (isMap(v) ? v[k] : undefined), o);
  const reasons: string[] = [];
  const changed = (...path: string[]) => !deepEqual(at(live, ...path), at(merged, ...path));
  switch (live.kind) {
    case 'Deployment': {
      // The server defaults replicas to 1.
      const [from, to] = [at(live, 'spec', 'replicas') ?? 1, at(merged, 'spec', 'replicas') ?? 1] as number[];
      if (to < from) reasons.push(`deletes ${to === 0 ? 'every pod' : `${from - to} of its ${from} pods`} (replicas ${from} → ${to}): their emptyDir data is lost`);
      if (changed('spec', 'template')) reasons.push('restarts the workload (the pod template changes: its pods are replaced)');
      break;
    }
    case 'VirtualMachine':
      if (vmRuns(at(live, 'spec')) && !vmRuns(at(merged, 'spec'))) reasons.push('stops the VM (KubeVirt deletes its VirtualMachineInstance)');
      if (changed('spec', 'template')) reasons.push('restarts the workload (the VM template changes: the VM is re-created from it)');
      break;
    case 'VirtualMachineInstance':
      if (changed('spec')) reasons.push('restarts the workload (the VMI spec changes: the running VM is replaced)');
      break;
  }
  return reasons.length ? reasons.join('; ') : undefined;
}

/** Whether a VirtualMachine spec asks for its VMI to run (`running`, or a `runStrategy` other than Halted). */
function vmRuns(spec: unknown): boolean {
  if (!isMap(spec)) return false;
  if (typeof spec.running === 'boolean') return spec.running;
  return spec.runStrategy !== undefined && spec.runStrategy !== 'Halted';
}

/** The danger of pruning an object of this kind (a workload, data), or undefined. */
export function pruneReason(kind: string): string | undefined {
  if (kind === 'Deployment' || kind === 'VirtualMachine' || kind === 'VirtualMachineInstance' || kind === 'Pod') return 'deletes the workload';
  if (kind === 'PersistentVolumeClaim' || kind === 'DataVolume') return 'deletes its data';
  return undefined;
}

/**
 * The managers whose fields a first apply by `crownlabs-composer` takes over: those that wrote the
 * object through Update (not a status subresource), when `crownlabs-composer` has never applied
 * it. Empty when we already manage it (a controller's later Update, e.g. the Deployment revision
 * annotation, is not a takeover) or when nobody else does.
 */
export function takeoverManagers(live: Obj | undefined, fieldManager = FIELD_MANAGER): string[] {
  const entries = (live?.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  if (entries.some((e) => e.manager === fieldManager && e.operation === 'Apply')) return [];
  const names = entries.filter((e) => e.operation === 'Update' && !e.subresource && e.manager && e.manager !== fieldManager).map((e) => e.manager!);
  return [...new Set(names)];
}

export type DiffAction = 'change' | 'create' | 'prune';

export interface ObjectChange {
  /** `Kind/namespace/name` */
  id: string;
  kind: string;
  action: DiffAction;
  /** Changed field paths (change only). */
  paths: string[];
  /** Set when the change or prune restarts or deletes a workload or data. */
  danger?: string;
  /** Managers (operation Update) whose object the apply takes over. */
  takeover: string[];
  note?: string;
}

/** `3 changed (2 Deployment, 1 Service), 1 created (1 Secret), 0 pruned; 1 dangerous, 0 errors` */
export function summaryLine(changes: readonly ObjectChange[], errors: number): string {
  const part = (action: DiffAction, word: string) => {
    const of = changes.filter((c) => c.action === action);
    const byKind = new Map<string, number>();
    for (const c of of) byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1);
    const kinds = [...byKind].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, n]) => `${n} ${k}`);
    return `${of.length} ${word}${kinds.length ? ` (${kinds.join(', ')})` : ''}`;
  };
  const dangerous = changes.filter((c) => c.danger).length;
  const takeovers = changes.filter((c) => c.takeover.length > 0).length;
  return `${part('change', 'changed')}, ${part('create', 'created')}, ${part('prune', 'pruned')}; ${dangerous} dangerous, ${takeovers} taken over, ${errors} error${errors === 1 ? '' : 's'}`;
}
