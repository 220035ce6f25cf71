/**
 * Keycloak identity sync (docs/behaviour.md §4.3, §4.5, §5.7, §5.8, Decision 5): workspace client roles and
 * tenant users, against the Keycloak Admin REST API, with fail-fast:false results.
 * Our own client, not @keycloak/keycloak-admin-client: that has no request timeout or token renewal and
 * adds 13 packages (measured in docs/decisions.md, "Keycloak: our own client").
 */
export type { KeycloakConfig } from './config.ts';
export { keycloakEnabled, validateKeycloakConfig, DEFAULT_REQUEST_TIMEOUT_MS } from './config.ts';
export type { KeycloakError, KeycloakErrorKind, KeycloakResult } from './errors.ts';
export { formatKeycloakError, formatKeycloakErrors } from './errors.ts';
export type { KeycloakLogger } from './logger.ts';
export type { KeycloakClientOptions } from './client.ts';
export { KeycloakClient, createKeycloakClient, DEFAULT_TOKEN_UPKEEP_INTERVAL_MS } from './client.ts';
export type { LoginBackoff, TokenStatus } from './token.ts';
export { decodeJwtExpiry } from './token.ts';
export type { WorkspaceRole, WorkspaceRoleDescription, EnsureWorkspaceRolesResult, DeleteWorkspaceRolesResult } from './roles.ts';
export { WORKSPACE_ROLES, WORKSPACE_ROLE_PREFIX, workspaceRoleName, wantedWorkspaceRoles } from './roles.ts';
export type { KeycloakUserSpec, UserSyncResult, UserDeleteResult } from './users.ts';
export { ACTIONS_EMAIL_LIFESPAN_SECONDS, NEW_USER_ACTIONS } from './representations.ts';
