/**
 * Workspace client roles (docs/behaviour.md §4.3 and §4.5 step 1): `workspace-<ws>:manager` and
 * `workspace-<ws>:user` on the target client, described after the workspace's pretty name. The
 * Kubernetes API server maps them to the groups `kubernetes:workspace-<ws>:<role>` bound in §4.2.
 */
import type { AdminApi } from './admin-api.ts';
import type { KeycloakError, KeycloakResult } from './errors.ts';
import type { RoleRepresentation } from './representations.ts';
import { isRole } from './representations.ts';

export type WorkspaceRole = 'manager' | 'user';

export const WORKSPACE_ROLES: readonly WorkspaceRole[] = ['manager', 'user'];

/** Client roles whose name starts with this are owned by the operator; others are never touched. */
export const WORKSPACE_ROLE_PREFIX = 'workspace-';

export function workspaceRoleName(workspaceName: string, role: WorkspaceRole): string {
  return `${WORKSPACE_ROLE_PREFIX}${workspaceName}:${role}`;
}

/**
 * The roles a tenant must hold (docs/behaviour.md §5.7 step 4): one per workspace entry that exists. Roles
 * other than manager/user (upstream HEAD's `candidate`) give no Keycloak role.
 */
export function wantedWorkspaceRoles(workspaces: ReadonlyArray<{ readonly name: string; readonly role: string }>): string[] {
  const names = workspaces
    .filter((entry): entry is { name: string; role: WorkspaceRole } => entry.role === 'manager' || entry.role === 'user')
    .map((entry) => workspaceRoleName(entry.name, entry.role));
  return [...new Set(names)].sort();
}

export interface EnsureWorkspaceRolesResult extends KeycloakResult {
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
}

export interface DeleteWorkspaceRolesResult extends KeycloakResult {
  readonly deleted: readonly string[];
  /** Already gone (404), which counts as success. */
  readonly absent: readonly string[];
}

/** A role's description: one text for both roles, or one per role (src/model/naming.ts workspaceRoleDescription). */
export type WorkspaceRoleDescription = string | ((role: WorkspaceRole) => string);

/**
 * Creates both roles or re-applies their description; each role is attempted even when the other
 * fails (fail-fast:false). A role already carrying the description is not written again, so a
 * steady-state reconcile sends no writes to Keycloak.
 */
export async function ensureWorkspaceRoles(api: AdminApi, workspaceName: string, description: WorkspaceRoleDescription): Promise<EnsureWorkspaceRolesResult> {
  const result = { created: [] as string[], updated: [] as string[], unchanged: [] as string[], errors: [] as KeycloakError[] };
  const client = await api.targetClient();
  if (!client.ok) return { ...result, ok: false, errors: [client.error] };

  for (const role of WORKSPACE_ROLES) {
    const name = workspaceRoleName(workspaceName, role);
    const prettyName = typeof description === 'string' ? description : description(role);
    const rolePath = ['clients', client.id, 'roles', name];
    const existing = await api.request<unknown>(`get role ${name}`, 'GET', rolePath);

    if (existing.ok) {
      if (!isRole(existing.body)) {
        result.errors.push({ kind: 'invalid-response', operation: `get role ${name}`, message: 'not a role representation' });
      } else if (existing.body.description === prettyName) {
        result.unchanged.push(name);
      } else {
        const updated = await updateDescription(api, client.id, existing.body, prettyName);
        if (updated) result.errors.push(updated);
        else result.updated.push(name);
      }
      continue;
    }

    // Upstream creates the role only on this exact error text; any other failure (a 404 from a
    // proxy because the base URL lacks /auth, say) is reported instead of papered over.
    if (existing.error.status !== 404 || !existing.error.message.includes('Could not find role')) {
      result.errors.push(existing.error);
      continue;
    }
    const representation: RoleRepresentation = { name, description: prettyName, clientRole: true };
    const created = await api.request(`create role ${name}`, 'POST', ['clients', client.id, 'roles'], { body: representation });
    if (created.ok) {
      result.created.push(name);
    } else if (created.error.status === 409) {
      // Another replica created it between our GET and POST: it exists, so make sure of the description.
      const updated = await updateDescription(api, client.id, representation, prettyName);
      if (updated) result.errors.push(updated);
      else result.updated.push(name);
    } else {
      result.errors.push(created.error);
    }
  }
  return { ...result, ok: result.errors.length === 0 };
}

/** Deletes both roles, each attempted regardless of the other; a role that is already gone is fine. */
export async function deleteWorkspaceRoles(api: AdminApi, workspaceName: string): Promise<DeleteWorkspaceRolesResult> {
  const result = { deleted: [] as string[], absent: [] as string[], errors: [] as KeycloakError[] };
  const client = await api.targetClient();
  if (!client.ok) return { ...result, ok: false, errors: [client.error] };

  for (const role of WORKSPACE_ROLES) {
    const name = workspaceRoleName(workspaceName, role);
    const deleted = await api.request(`delete role ${name}`, 'DELETE', ['clients', client.id, 'roles', name]);
    if (deleted.ok) result.deleted.push(name);
    else if (deleted.error.status === 404) result.absent.push(name);
    else result.errors.push(deleted.error);
  }
  return { ...result, ok: result.errors.length === 0 };
}

/** PUT the role back with the new description; returns the error, if any. */
async function updateDescription(
  api: AdminApi,
  clientInternalId: string,
  role: RoleRepresentation,
  description: string,
): Promise<KeycloakError | undefined> {
  const updated = await api.request(`update role ${role.name}`, 'PUT', ['clients', clientInternalId, 'roles', role.name], {
    body: { ...role, description },
  });
  return updated.ok ? undefined : updated.error;
}
