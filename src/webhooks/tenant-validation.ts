/**
 * The validating Tenant webhook (`/validate-v1alpha2-tenant`, docs/behaviour.md §6.2): a user may edit only the
 * public keys (and, within ±24 h of now, the last login) of their own Tenant; anyone else may only
 * change the enrolments in workspaces they manage. Pure apart from the injected Tenant lookup and clock.
 */
import type { Tenant } from '../inputs/types.ts';
import { DEFAULT_API_LEVEL } from '../inputs/api-level.ts';
import { allowed, denied, errored, isBypass, type AdmissionRequest, type AdmissionResponse } from './admission.ts';
import { decodeTenant, emptyTenant, tenantName, workspaceRoles } from './tenant-decode.ts';
import type { TenantWebhookConfig } from './tenant-mutation.ts';
import { changedWorkspaces, LAST_LOGIN_TOLERANCE_MS, lastLoginOutOfRange, sameInstant, semanticEqual } from './tenant-compare.ts';
import { validateBypassE6, validateManagerEditE6, validateSelfEditE6, type E6ValidationDeps } from './tenant-validation-e62be9e.ts';

export const DENY_SELF_EDIT = 'only changes to public keys are allowed in the owned tenant';
export const DENY_MANAGER_EDIT = 'only changes to workspaces are allowed to workspace managers';
export const notManagerOf = (ws: string) => `you are not a manager for workspace <${ws}>`;
export const COULD_NOT_FETCH_TENANT = 'could not fetch a tenant for the current user';

export interface TenantValidationDeps extends Partial<E6ValidationDeps> {
  /** The Tenant of that name; rejects when it cannot be read (missing included). */
  getTenant(name: string): Promise<Tenant>;
  /** Milliseconds since the epoch. */
  now(): number;
}

export async function validateTenant(
  request: AdmissionRequest,
  config: Pick<TenantWebhookConfig, 'bypassGroups' | 'bypassUsers' | 'level'>,
  deps: TenantValidationDeps,
): Promise<AdmissionResponse> {
  const uid = request.uid;
  // The rules differ per API level here only (docs/behaviour.md §6.2, §16.4).
  const e6 = (config.level ?? DEFAULT_API_LEVEL) === 'e62be9e';
  if (isBypass(request, config)) {
    if (!e6 || request.operation !== 'UPDATE') return allowed(uid);
    const [t, o] = [decodeTenant(request.object), decodeTenant(request.oldObject, 'oldObject')];
    if ('error' in t) return errored(uid, 400, t.error);
    if ('error' in o) return errored(uid, 400, o.error);
    return validateBypassE6(uid, t.tenant, o.tenant, deps);
  }
  const decoded = decodeTenant(request.object);
  if ('error' in decoded) return errored(uid, 400, decoded.error);
  const decodedOld = decodeTenant(request.oldObject, 'oldObject');
  if ('error' in decodedOld && request.operation !== 'CREATE') return errored(uid, 400, decodedOld.error);
  const tenant = decoded.tenant;
  const old = 'error' in decodedOld ? emptyTenant() : decodedOld.tenant;

  const username = request.userInfo?.username ?? '';
  // At e62be9e a CREATE is always judged as someone else's edit, the owner's included.
  if (username && username === tenantName(request) && !(e6 && request.operation === 'CREATE')) {
    return e6 ? validateSelfEditE6(uid, tenant, old, deps.now(), deps) : validateSelfEdit(uid, tenant, old, deps.now());
  }

  let requester: Tenant;
  try {
    requester = await deps.getTenant(username);
  } catch (e) {
    // e62be9e answers with the API server's own code and reason (404 NotFound for a missing Tenant) when there is one.
    const { code, body } = e as { code?: unknown; body?: { reason?: unknown } };
    const apiStatus = e6 && typeof code === 'number' && code >= 400 && code < 600;
    const reason = apiStatus && typeof body?.reason === 'string' ? body.reason : undefined;
    return errored(uid, apiStatus ? code : 400, `${COULD_NOT_FETCH_TENANT}: ${(e as Error).message}`, reason);
  }
  const isCreate = request.operation === 'CREATE';
  return e6 ? validateManagerEditE6(uid, tenant, old, requester, isCreate) : validateManagerEdit(uid, tenant, old, requester, isCreate);
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

export { changedWorkspaces, LAST_LOGIN_TOLERANCE_MS, lastLoginOutOfRange, semanticEqual };
