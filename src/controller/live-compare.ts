/**
 * Does the live object already hold everything we render? A subset comparison: every field we
 * render must be present in the live object with the same value; fields the server adds (defaults,
 * status, metadata) are ignored. Quantities are compared by value (`1000m` equals `1`), a Secret's
 * `stringData` is compared with the live base64 `data`, and an empty value we render matches a
 * field the server omitted.
 */
import { compareQuantities, isQuantity } from '../inputs/quantity.ts';

export function liveHoldsRendered(rendered: Record<string, unknown>, live: Record<string, unknown> | undefined): boolean {
  if (!live) return false;
  const r = { ...rendered };
  if (r.kind === 'Secret' && r.stringData && typeof r.stringData === 'object') {
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
