/**
 * Does the live object already hold everything we render? A subset comparison: every field we
 * render must be present in the live object with the same value; fields the server adds (defaults,
 * status, metadata) are ignored. Quantities are compared by value (`1000m` equals `1`), a Secret's
 * `stringData` is compared with the live base64 `data` (or, for a cached Secret, the digests of
 * both), and an empty value we render matches a field the server omitted.
 */
import { compareQuantities, isQuantity } from '../inputs/quantity.ts';
import { DATA_DIGESTS, secretDigests } from './secret-digest.ts';

export function liveHoldsRendered(rendered: Record<string, unknown>, live: Record<string, unknown> | undefined): boolean {
  if (!live) return false;
  const r = { ...rendered };
  if (r.kind === 'Secret' && live[DATA_DIGESTS] !== undefined) {
    // The cache keeps digests of a Secret's data (secret-digest.ts): compare the rendered data's.
    r[DATA_DIGESTS] = secretDigests(r.data as Record<string, unknown> | undefined, r.stringData as Record<string, unknown> | undefined);
    delete r.data;
    delete r.stringData;
  } else if (r.kind === 'Secret' && r.stringData && typeof r.stringData === 'object') {
    const data = { ...((r.data as Record<string, string>) ?? {}) };
    for (const [k, v] of Object.entries(r.stringData as Record<string, string>)) data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    r.data = data;
    delete r.stringData;
  }
  return subset(r, live, '');
}

/** The first path where `live` differs from `rendered` (for logs and tests), or undefined. */
export function firstDifference(rendered: unknown, live: unknown, path = ''): string | undefined {
  if (isEmpty(rendered) && (live === undefined || live === null)) return undefined;
  if (Array.isArray(rendered)) {
    if (!Array.isArray(live) || live.length !== rendered.length) return path || '/';
    for (let i = 0; i < rendered.length; i++) {
      const d = firstDifference(rendered[i], live[i], `${path}/${i}`);
      if (d) return d;
    }
    return undefined;
  }
  if (rendered && typeof rendered === 'object') {
    if (!live || typeof live !== 'object' || Array.isArray(live)) return path || '/';
    for (const [k, v] of Object.entries(rendered)) {
      const d = firstDifference(v, (live as Record<string, unknown>)[k], `${path}/${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return scalarEqual(rendered, live) ? undefined : path || '/';
}

function subset(rendered: unknown, live: unknown, path: string): boolean {
  return firstDifference(rendered, live, path) === undefined;
}

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null || v === '' || v === false || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.keys(v as object).length === 0;
  return false;
}

function scalarEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  // int-or-string fields and quantities: the server may canonicalise `1000m` to `1`, `"2"` to 2.
  if ((typeof a === 'string' || typeof a === 'number') && (typeof b === 'string' || typeof b === 'number')) {
    if (String(a) === String(b)) return true;
    if (isQuantity(a) && isQuantity(b)) {
      try {
        return compareQuantities(a, b) === 0;
      } catch {
        return false;
      }
    }
  }
  return false;
}

/**
 * Annotations that the API server's controllers write on objects we render and that no construct
 * renders: a change of one cannot be drift (the Deployment controller's revision, the PV binder's
 * and provisioner's marks on a claim, the scheduler's node choice, KubeVirt's observed API versions).
 */
const SERVER_ANNOTATIONS = new Set([
  'deployment.kubernetes.io/revision',
  'pv.kubernetes.io/bind-completed',
  'pv.kubernetes.io/bound-by-controller',
  'volume.beta.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/storage-provisioner',
  'volume.kubernetes.io/selected-node',
  'kubevirt.io/latest-observed-api-version',
  'kubevirt.io/storage-observed-api-version',
]);

/**
 * Whether an update of a live object changed nothing we render, only what the server owns: the
 * status, resourceVersion, generation, an annotation of `SERVER_ANNOTATIONS`, and the volume a
 * claim gets bound to (no construct renders `volumeName` for the controller's sets). There is no
 * drift to repair then, only a status to read.
 */
export function onlyStatusChanged(obj: Record<string, unknown>, old: Record<string, unknown>): boolean {
  const keys = new Set([...Object.keys(obj), ...Object.keys(old)]);
  for (const k of keys) {
    if (k === 'status') continue;
    if (k === 'metadata') {
      if (!sameMetadata(obj.metadata as Record<string, unknown> | undefined, old.metadata as Record<string, unknown> | undefined)) return false;
    } else if (k === 'spec' && obj.kind === 'PersistentVolumeClaim' && !(old.spec as { volumeName?: string } | undefined)?.volumeName) {
      const { volumeName: _bound, ...spec } = (obj.spec ?? {}) as Record<string, unknown>;
      if (!sameJson(spec, old.spec ?? {})) return false;
    } else if (!sameJson(obj[k], old[k])) return false;
  }
  return true;
}

function sameMetadata(a: Record<string, unknown> = {}, b: Record<string, unknown> = {}): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    if (k === 'resourceVersion' || k === 'generation' || k === 'managedFields') continue;
    if (k === 'annotations') {
      const x = (a.annotations ?? {}) as Record<string, unknown>;
      const y = (b.annotations ?? {}) as Record<string, unknown>;
      for (const n of new Set([...Object.keys(x), ...Object.keys(y)])) if (!SERVER_ANNOTATIONS.has(n) && x[n] !== y[n]) return false;
    } else if (!sameJson(a[k], b[k])) return false;
  }
  return true;
}

/** Deep equality of JSON values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
