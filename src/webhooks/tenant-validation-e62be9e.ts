/**
 * The validating Tenant webhook at API level e62be9e (docs/behaviour.md §16.4): self-enrolment in
 * `autoEnroll` Workspaces, a lastLogin checked whenever present, every CREATE judged as a
 * manager's edit, and a bypass requester refused to disable a personal workspace whose Templates
 * still have Instances. The 2e8aeb9 rules are ./tenant-validation.ts, which dispatches here.
 */
import { TEMPLATE_REF, type Instance, type Tenant, type Workspace } from '../inputs/types.ts';
import { allowed, denied, errored, type AdmissionResponse } from './admission.ts';
import { workspaceRoles } from './tenant-decode.ts';
import { changedWorkspaces, LAST_LOGIN_TOLERANCE_MS, lastLoginOutOfRange, sameInstant, semanticEqual } from './tenant-compare.ts';

export const E6_DENY_SELF_EDIT = 'unexpected tenant spec change, only lastLogin and self-enrolling workspaces are allowed to change';
export const E6_DENY_SELF_WORKSPACES = 'you are not allowed to change your own workspaces';
export const E6_DENY_MANAGER_EDIT = 'only changes to workspaces are allowed in the tenant';
export const e6NotManagerOf = (ws: string) => `you are not a manager for workspace ${ws}, so you cannot change it in the tenant`;
export const E6_PERSONAL_WORKSPACE_IN_USE = 'cannot disable personal workspace, there are instances of personal workspace templates in the namespace';

/** What the e62be9e rules read besides the requester's Tenant. */
export interface E6ValidationDeps {
  /** The Workspace of that name; rejects when it cannot be read. */
  getWorkspace(name: string): Promise<Workspace>;
  /** The Instances of a namespace. */
  listInstances(namespace: string): Promise<Instance[]>;
}

/** The role a Tenant may give itself in a Workspace, by its autoEnroll; none: it may not enrol itself. */
function selfEnrolRole(ws: Workspace): 'user' | 'candidate' | undefined {
  const a = ws.spec.autoEnroll;
  return a === 'immediate' ? 'user' : a === 'withApproval' ? 'candidate' : undefined;
}

/** The owner's own edit: lastLogin near now when present, the spec otherwise unchanged, self-enrolment as the Workspaces allow. */
export async function validateSelfEditE6(uid: string, tenant: Tenant, old: Tenant, now: number, deps: Partial<E6ValidationDeps>): Promise<AdmissionResponse> {
  const at = tenant.spec.lastLogin;
  // Checked whenever present, changed or not; absent (or null) is accepted.
  if (at !== undefined && at !== null && !(Math.abs(Date.parse(at) - now) <= LAST_LOGIN_TOLERANCE_MS)) return denied(uid, lastLoginOutOfRange(now));
  const rest = (t: Tenant) => {
    const spec = { ...t.spec } as Record<string, unknown>;
    delete spec.publicKeys;
    delete spec.lastLogin;
    delete spec.workspaces;
    return spec;
  };
  if (!semanticEqual(rest(tenant), rest(old))) return denied(uid, E6_DENY_SELF_EDIT);
  const wanted = workspaceRoles(tenant);
  for (const name of changedWorkspaces(tenant, old)) {
    let ws: Workspace;
    try {
      if (!deps.getWorkspace) throw new Error('no Workspace lookup');
      ws = await deps.getWorkspace(name);
    } catch (e) {
      return errored(uid, 500, `failed to check workspace changes: failed to fetch workspace ${name}: ${(e as Error).message}`, 'InternalError');
    }
    const role = selfEnrolRole(ws);
    if (!role) return denied(uid, E6_DENY_SELF_WORKSPACES);
    // Leaving an autoEnroll Workspace is always allowed.
    if (wanted.has(name) && wanted.get(name) !== role) return denied(uid, E6_DENY_SELF_WORKSPACES);
  }
  return allowed(uid);
}

/** Anyone else's edit (every CREATE included): each changed enrolment in a Workspace the requester manages, nothing else changed. */
export function validateManagerEditE6(uid: string, tenant: Tenant, old: Tenant, requester: Tenant, isCreate: boolean): AdmissionResponse {
  const managed = workspaceRoles(requester);
  for (const ws of changedWorkspaces(tenant, old)) if (managed.get(ws) !== 'manager') return denied(uid, e6NotManagerOf(ws));
  const rest = (t: Tenant) => {
    const spec = { ...t.spec } as Record<string, unknown>;
    delete spec.workspaces;
    return spec;
  };
  const a = rest(tenant);
  const b = rest(old);
  if (sameInstant(a.lastLogin, b.lastLogin)) {
    delete a.lastLogin;
    delete b.lastLogin;
  }
  if (!isCreate && !semanticEqual(a, b)) return denied(uid, E6_DENY_MANAGER_EDIT);
  return allowed(uid);
}

/**
 * A bypass requester's UPDATE: refused (409) when it removes the personal workspace while an
 * Instance in the personal namespace runs one of that namespace's Templates.
 */
export async function validateBypassE6(uid: string, tenant: Tenant, old: Tenant, deps: Partial<E6ValidationDeps>): Promise<AdmissionResponse> {
  if (!old.spec?.personalWorkspace || tenant.spec?.personalWorkspace) return allowed(uid);
  const ns = old.status?.personalNamespace?.name;
  if (!ns) return allowed(uid);
  let instances: Instance[];
  try {
    if (!deps.listInstances) throw new Error('no Instance lookup');
    instances = await deps.listInstances(ns);
  } catch (e) {
    return errored(uid, 500, (e as Error).message, 'InternalError');
  }
  if (instances.some((i) => i.spec?.[TEMPLATE_REF]?.namespace === ns)) return { uid, allowed: false, status: { code: 409, reason: 'Conflict', message: E6_PERSONAL_WORKSPACE_IN_USE } };
  return allowed(uid);
}
