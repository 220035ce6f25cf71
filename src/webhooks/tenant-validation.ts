/**
 * The validating Tenant webhook (`/validate-v1alpha2-tenant`, docs/behaviour.md §6.2): a user may edit only the
 * public keys (and, within ±24 h of now, the last login) of their own Tenant; anyone else may only
 * change the enrolments in workspaces they manage. Pure apart from the injected Tenant lookup and clock.
 */
import type { Tenant } from '../inputs/types.ts';
import { allowed, denied, errored, isBypass, isObject, type AdmissionRequest, type AdmissionResponse } from './admission.ts';
import { decodeTenant, emptyTenant, tenantName, workspaceRoles } from './tenant-decode.ts';
import type { TenantWebhookConfig } from './tenant-mutation.ts';

/** Upstream `LastLoginToleration`. */
export const LAST_LOGIN_TOLERANCE_MS = 24 * 3600_000;

export const DENY_SELF_EDIT = 'only changes to public keys are allowed in the owned tenant';
export const DENY_MANAGER_EDIT = 'only changes to workspaces are allowed to workspace managers';
export const notManagerOf = (ws: string) => `you are not a manager for workspace <${ws}>`;
export const lastLoginOutOfRange = (now: number) =>
  `unacceptable last login time, must be within +/-24h0m0s since local server time: ${new Date(now).toISOString()}`;
export const COULD_NOT_FETCH_TENANT = 'could not fetch a tenant for the current user';

export interface TenantValidationDeps {
  /** The Tenant of that name; rejects when it cannot be read (missing included). */
  getTenant(name: string): Promise<Tenant>;
  /** Milliseconds since the epoch. */
  now(): number;
}

export async function validateTenant(
  request: AdmissionRequest,
  config: Pick<TenantWebhookConfig, 'bypassGroups' | 'bypassUsers'>,
  deps: TenantValidationDeps,
): Promise<AdmissionResponse> {
  const uid = request.uid;
  if (isBypass(request, config)) return allowed(uid);
  const decoded = decodeTenant(request.object);
  if ('error' in decoded) return errored(uid, 400, decoded.error);
  const decodedOld = decodeTenant(request.oldObject, 'oldObject');
  if ('error' in decodedOld && request.operation !== 'CREATE') return errored(uid, 400, decodedOld.error);
  const tenant = decoded.tenant;
  const old = 'error' in decodedOld ? emptyTenant() : decodedOld.tenant;

  const username = request.userInfo?.username ?? '';
  if (username && username === tenantName(request)) return validateSelfEdit(uid, tenant, old, deps.now());

  let requester: Tenant;
  try {
    requester = await deps.getTenant(username);
  } catch (e) {
    return errored(uid, 400, `${COULD_NOT_FETCH_TENANT}: ${(e as Error).message}`);
  }
  return validateManagerEdit(uid, tenant, old, requester, request.operation === 'CREATE');
}

function validateSelfEdit(uid: string, tenant: Tenant, old: Tenant, now: number): AdmissionResponse {
  const spec = { ...tenant.spec } as Record<string, unknown>;
  const oldSpec = { ...old.spec } as Record<string, unknown>;
  delete spec.publicKeys;
  delete oldSpec.publicKeys;
  if (!sameInstant(spec.lastLogin, oldSpec.lastLogin)) {
    const at = typeof spec.lastLogin === 'string' ? Date.parse(spec.lastLogin) : NaN;
    // A removed or unreadable time counts as Go's zero time: far outside the tolerance.
    if (!(Math.abs(at - now) <= LAST_LOGIN_TOLERANCE_MS)) return denied(uid, lastLoginOutOfRange(now));
  }
  delete spec.lastLogin;
  delete oldSpec.lastLogin;
  if (!semanticEqual(spec, oldSpec)) return denied(uid, DENY_SELF_EDIT);
  return allowed(uid);
}

function validateManagerEdit(uid: string, tenant: Tenant, old: Tenant, requester: Tenant, isCreate: boolean): AdmissionResponse {
  const managed = workspaceRoles(requester);
  for (const ws of changedWorkspaces(tenant, old)) {
    if (managed.get(ws) !== 'manager') return denied(uid, notManagerOf(ws));
  }
  const spec = { ...tenant.spec } as Record<string, unknown>;
  const oldSpec = { ...old.spec } as Record<string, unknown>;
  delete spec.workspaces;
  delete oldSpec.workspaces;
  // A time, as on the owner's path: the same instant written differently is no change.
  if (sameInstant(spec.lastLogin, oldSpec.lastLogin)) {
    delete spec.lastLogin;
    delete oldSpec.lastLogin;
  }
  if (!isCreate && !semanticEqual(spec, oldSpec)) return denied(uid, DENY_MANAGER_EDIT);
  return allowed(uid);
}

/** Workspaces whose name → role entry differs between the two Tenants, either way, in name order. */
export function changedWorkspaces(a: Tenant, b: Tenant): string[] {
  const ra = workspaceRoles(a);
  const rb = workspaceRoles(b);
  const changed = new Set<string>();
  for (const [ws, role] of ra) if (rb.get(ws) !== role) changed.add(ws);
  for (const [ws, role] of rb) if (ra.get(ws) !== role) changed.add(ws);
  return [...changed].sort();
}

function sameInstant(a: unknown, b: unknown): boolean {
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
