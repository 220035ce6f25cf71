/**
 * The fields of Keycloak's JSON representations that this module reads or writes. Keycloak sends
 * more; they are kept (index signature) so that an update can send a user back unchanged.
 */

export interface RoleRepresentation {
  readonly id?: string;
  readonly name: string;
  readonly description?: string;
  readonly composite?: boolean;
  readonly clientRole?: boolean;
  readonly containerId?: string;
  readonly attributes?: Record<string, string[]>;
}

export interface UserRepresentation {
  readonly id?: string;
  readonly username?: string;
  readonly firstName?: string;
  readonly lastName?: string;
  readonly email?: string;
  readonly emailVerified?: boolean;
  readonly enabled?: boolean;
  readonly [field: string]: unknown;
}

export interface ClientRepresentation {
  readonly id?: string;
  readonly clientId?: string;
}

/** Required actions of the set-up e-mail a new user receives (docs/behaviour.md §2.1). */
export const NEW_USER_ACTIONS = ['UPDATE_PASSWORD', 'VERIFY_EMAIL'] as const;
/** Validity of the links in that e-mail: 30 days, in seconds (docs/behaviour.md §2.1). */
export const ACTIONS_EMAIL_LIFESPAN_SECONDS = 2_592_000;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

export function isRole(value: unknown): value is RoleRepresentation & { id: string } {
  return isObject(value) && typeof value.name === 'string' && typeof value.id === 'string';
}

export function isUser(value: unknown): value is UserRepresentation & { id: string; username: string } {
  return isObject(value) && typeof value.id === 'string' && typeof value.username === 'string';
}

export function isClient(value: unknown): value is ClientRepresentation & { id: string; clientId: string } {
  return isObject(value) && typeof value.id === 'string' && typeof value.clientId === 'string';
}

/** `value` as an array whose every element passes `guard`, or undefined. */
export function arrayOf<T>(value: unknown, guard: (element: unknown) => element is T): T[] | undefined {
  return Array.isArray(value) && value.every(guard) ? value : undefined;
}
