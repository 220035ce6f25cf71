/** What both levels' Tenant validation compares: enrolments, instants, specs (docs/behaviour.md §6.2). */
import type { Tenant } from '../inputs/types.ts';
import { isObject } from './admission.ts';
import { workspaceRoles } from './tenant-decode.ts';

/** Upstream `LastLoginToleration`. */
export const LAST_LOGIN_TOLERANCE_MS = 24 * 3600_000;

export const lastLoginOutOfRange = (now: number) =>
  `unacceptable last login time, must be within +/-24h0m0s since local server time: ${new Date(now).toISOString()}`;

/** Workspaces whose name → role entry differs between the two Tenants, either way, in name order. */
export function changedWorkspaces(a: Tenant, b: Tenant): string[] {
  const ra = workspaceRoles(a);
  const rb = workspaceRoles(b);
  const changed = new Set<string>();
  for (const [ws, role] of ra) if (rb.get(ws) !== role) changed.add(ws);
  for (const [ws, role] of rb) if (ra.get(ws) !== role) changed.add(ws);
  return [...changed].sort();
}

export function sameInstant(a: unknown, b: unknown): boolean {
  if (a === b || ((a === undefined || a === null) && (b === undefined || b === null))) return true;
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  const ta = Date.parse(a);
  const tb = Date.parse(b);
  // Go compares metav1.Time at second precision.
  return Number.isFinite(ta) && Number.isFinite(tb) && Math.floor(ta / 1000) === Math.floor(tb / 1000);
}

/**
 * Deep equality as upstream's typed comparison sees it: a field that is absent equals its zero
 * value (false, 0, "", empty list or map), so `createSandbox: false` and no `createSandbox` agree.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function canonical(v: unknown): unknown {
  if (Array.isArray(v)) {
    const items = v.map(canonical);
    return items.length ? items : undefined;
  }
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const c = canonical(v[k]);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length ? out : undefined;
  }
  if (v === null || v === false || v === 0 || v === '') return undefined;
  return v;
}
