/**
 * Tenant ↔ Keycloak user (docs/behaviour.md §5.7 and §5.8): find the user by username, create or update it,
 * send the set-up e-mail when the address is new, and make its `workspace-*` client roles match the
 * tenant's workspaces. Independent steps go on after a failure (docs/behaviour.md Decision 5, fail-fast:false).
 */
import type { AdminApi } from './admin-api.ts';
import type { KeycloakError, KeycloakResult } from './errors.ts';
import type { RoleRepresentation, UserRepresentation } from './representations.ts';
import { ACTIONS_EMAIL_LIFESPAN_SECONDS, NEW_USER_ACTIONS, arrayOf, isRole, isUser } from './representations.ts';
import { WORKSPACE_ROLE_PREFIX } from './roles.ts';

export interface KeycloakUserSpec {
  /** The Tenant's name. */
  readonly username: string;
  readonly firstName: string;
  readonly lastName: string;
  /** Stored lower-cased, as upstream does (docs/behaviour.md §5.3 step 1). */
  readonly email: string;
  /** Full client-role names the user must hold (see `wantedWorkspaceRoles`). */
  readonly wantedRoles: readonly string[];
}

export interface UserSyncResult extends KeycloakResult {
  /** Keycloak's id of the user, once it is known to exist. */
  readonly userId?: string;
  readonly created: boolean;
  /** An existing user's names, e-mail or enabled flag were rewritten. */
  readonly updated: boolean;
  /** The UPDATE_PASSWORD/VERIFY_EMAIL e-mail was accepted by Keycloak. */
  readonly actionsEmailSent: boolean;
  readonly rolesAdded: readonly string[];
  readonly rolesRemoved: readonly string[];
}

export interface UserDeleteResult extends KeycloakResult {
  /** False when there was no such user (which is success). */
  readonly deleted: boolean;
  readonly userId?: string;
}

type ExistingUser = UserRepresentation & { id: string; username: string };

export type UserLookup =
  | { readonly ok: true; readonly user: ExistingUser | undefined }
  | { readonly ok: false; readonly error: KeycloakError };

/**
 * The user whose username is exactly `username` (Keycloak keeps usernames lower-cased, so the
 * comparison ignores case). `exact=true` makes current servers return only that user; older ones
 * ignore the parameter and search by substring, capped at 100 results, hence the filtering here.
 * Upstream takes a single search result even when it is not an exact match, which would hand
 * user "john.doe" to tenant "john"; we only ever take an exact match. Several exact matches (only
 * possible with federated stores) are an error rather than a guess.
 */
export async function findUserByUsername(api: AdminApi, username: string): Promise<UserLookup> {
  const operation = `find user ${username}`;
  const found = await api.request<unknown>(operation, 'GET', ['users'], { query: { username, exact: 'true' } });
  if (!found.ok) return found;
  const users = arrayOf(found.body, isUser);
  if (!users) return { ok: false, error: { kind: 'invalid-response', operation, message: 'user list is not an array of users' } };
  const wanted = username.toLowerCase();
  const exact = users.filter((user) => user.username.toLowerCase() === wanted);
  if (exact.length > 1) {
    return {
      ok: false,
      error: {
        kind: 'ambiguous',
        operation,
        message: `${exact.length} users have the username "${username}" (ids ${exact.map((user) => user.id).join(', ')})`,
      },
    };
  }
  return { ok: true, user: exact[0] };
}

export async function syncUser(api: AdminApi, spec: KeycloakUserSpec): Promise<UserSyncResult> {
  const errors: KeycloakError[] = [];
  const outcome = { created: false, updated: false, actionsEmailSent: false, rolesAdded: [] as string[], rolesRemoved: [] as string[] };
  const finish = (userId?: string): UserSyncResult => ({ ...outcome, userId, errors, ok: errors.length === 0 });

  const login = await api.login();
  if (!login.ok) {
    errors.push(login.error);
    return finish();
  }
  const lookup = await findUserByUsername(api, spec.username);
  if (!lookup.ok) {
    errors.push(lookup.error);
    return finish();
  }

  const email = spec.email.toLowerCase();
  let userId: string;
  if (!lookup.user) {
    const created = await createUser(api, spec, email);
    if (!created.ok) {
      errors.push(created.error);
      return finish();
    }
    userId = created.id;
    outcome.created = true;
    const mailed = await sendActionsEmail(api, spec.username, userId);
    if (mailed) errors.push(mailed);
    else outcome.actionsEmailSent = true;
  } else {
    const user = lookup.user;
    userId = user.id;
    const emailChanged = (user.email ?? '').toLowerCase() !== email;
    const stale =
      emailChanged || (user.firstName ?? '') !== spec.firstName || (user.lastName ?? '') !== spec.lastName || user.enabled !== true;
    if (stale) {
      const updateError = await updateUser(api, user, spec, email, emailChanged);
      if (updateError) {
        // The address did not change in Keycloak, so a verification e-mail would go to the old one.
        errors.push(updateError);
      } else {
        outcome.updated = true;
        if (emailChanged) {
          const mailed = await sendActionsEmail(api, spec.username, userId);
          if (mailed) errors.push(mailed);
          else outcome.actionsEmailSent = true;
        }
      }
    }
  }

  const roles = await syncUserRoles(api, spec.username, userId, spec.wantedRoles);
  errors.push(...roles.errors);
  outcome.rolesAdded = roles.added;
  outcome.rolesRemoved = roles.removed;
  return finish(userId);
}

/** Deletes the user with that username; no such user is success (docs/behaviour.md §5.8). */
export async function deleteUser(api: AdminApi, username: string): Promise<UserDeleteResult> {
  const login = await api.login();
  if (!login.ok) return { ok: false, errors: [login.error], deleted: false };
  const lookup = await findUserByUsername(api, username);
  if (!lookup.ok) return { ok: false, errors: [lookup.error], deleted: false };
  if (!lookup.user) return { ok: true, errors: [], deleted: false };
  const userId = lookup.user.id;
  const deleted = await api.request(`delete user ${username}`, 'DELETE', ['users', userId]);
  if (deleted.ok) return { ok: true, errors: [], deleted: true, userId };
  // Deleted by someone else since the lookup: the goal is reached all the same.
  if (deleted.error.status === 404) return { ok: true, errors: [], deleted: false, userId };
  return { ok: false, errors: [deleted.error], deleted: false, userId };
}

async function createUser(
  api: AdminApi,
  spec: KeycloakUserSpec,
  email: string,
): Promise<{ ok: true; id: string } | { ok: false; error: KeycloakError }> {
  const operation = `create user ${spec.username}`;
  const body: UserRepresentation = {
    username: spec.username,
    firstName: spec.firstName,
    lastName: spec.lastName,
    email,
    enabled: true,
    emailVerified: false,
  };
  const created = await api.request(operation, 'POST', ['users'], { body });
  if (!created.ok) return created;
  // Keycloak answers 201 with the new user's URL; its last segment is the id.
  const location = created.headers.get('location');
  const fromLocation = location ? decodeURIComponent(new URL(location, 'http://placeholder').pathname.split('/').pop() ?? '') : '';
  if (fromLocation !== '') return { ok: true, id: fromLocation };
  const lookup = await findUserByUsername(api, spec.username);
  if (!lookup.ok) return lookup;
  if (!lookup.user) return { ok: false, error: { kind: 'invalid-response', operation, message: 'user was created but cannot be found' } };
  return { ok: true, id: lookup.user.id };
}

async function updateUser(
  api: AdminApi,
  user: ExistingUser,
  spec: KeycloakUserSpec,
  email: string,
  emailChanged: boolean,
): Promise<KeycloakError | undefined> {
  // Send the user back whole: newer servers (declarative user profile) may clear attributes that a
  // partial representation leaves out. `access` is computed per caller and read-only.
  const { access: _access, ...current } = user;
  const body: UserRepresentation = {
    ...current,
    firstName: spec.firstName,
    lastName: spec.lastName,
    email,
    enabled: true,
    ...(emailChanged ? { emailVerified: false } : {}),
  };
  const updated = await api.request(`update user ${spec.username}`, 'PUT', ['users', user.id], { body });
  return updated.ok ? undefined : updated.error;
}

async function sendActionsEmail(api: AdminApi, username: string, userId: string): Promise<KeycloakError | undefined> {
  const sent = await api.request(`send actions e-mail to ${username}`, 'PUT', ['users', userId, 'execute-actions-email'], {
    query: { lifespan: String(ACTIONS_EMAIL_LIFESPAN_SECONDS) },
    body: NEW_USER_ACTIONS,
  });
  return sent.ok ? undefined : sent.error;
}

/**
 * Makes the user's client roles on the target client match `wanted`, touching only roles named
 * `workspace-*`. Upstream aborts on the first wanted role it cannot fetch; we still remove the
 * stale roles (decided by name alone) and add the wanted roles that could be fetched, and report
 * every failure. Only the missing roles are added, so a steady state sends no writes.
 */
async function syncUserRoles(
  api: AdminApi,
  username: string,
  userId: string,
  wanted: readonly string[],
): Promise<{ errors: KeycloakError[]; added: string[]; removed: string[] }> {
  const errors: KeycloakError[] = [];
  const added: string[] = [];
  const removed: string[] = [];
  const client = await api.targetClient();
  if (!client.ok) return { errors: [client.error], added, removed };

  const wantedNames = new Set(wanted);
  const resolved: RoleRepresentation[] = [];
  for (const name of wantedNames) {
    const role = await api.request<unknown>(`get role ${name}`, 'GET', ['clients', client.id, 'roles', name]);
    if (!role.ok) errors.push(role.error);
    else if (!isRole(role.body)) errors.push({ kind: 'invalid-response', operation: `get role ${name}`, message: 'not a role representation' });
    else resolved.push(role.body);
  }

  const mappingsPath = ['users', userId, 'role-mappings', 'clients', client.id];
  const currentOperation = `get client roles of ${username}`;
  const current = await api.request<unknown>(currentOperation, 'GET', mappingsPath);
  let toAdd = resolved;
  if (!current.ok) {
    errors.push(current.error);
  } else {
    const currentRoles = arrayOf(current.body, isRole);
    if (!currentRoles) {
      errors.push({ kind: 'invalid-response', operation: currentOperation, message: 'role mappings are not an array of roles' });
    } else {
      const stale = currentRoles.filter((role) => role.name.startsWith(WORKSPACE_ROLE_PREFIX) && !wantedNames.has(role.name));
      if (stale.length > 0) {
        const names = stale.map((role) => role.name);
        const deleted = await api.request(`remove roles ${names.join(', ')} from ${username}`, 'DELETE', mappingsPath, { body: stale });
        if (deleted.ok) removed.push(...names);
        else errors.push(deleted.error);
      }
      const held = new Set(currentRoles.map((role) => role.name));
      toAdd = resolved.filter((role) => !held.has(role.name));
    }
  }

  if (toAdd.length > 0) {
    const names = toAdd.map((role) => role.name);
    const granted = await api.request(`add roles ${names.join(', ')} to ${username}`, 'POST', mappingsPath, { body: toAdd });
    if (granted.ok) added.push(...names);
    else errors.push(granted.error);
  }
  return { errors, added, removed };
}
