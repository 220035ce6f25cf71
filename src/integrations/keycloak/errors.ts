/**
 * How the Keycloak module reports failure. Nothing in this module throws at its callers: every
 * public operation resolves to a result listing each step that failed (docs/behaviour.md Decision 5,
 * fail-fast:false), so a reconciler can write all of them into status and retry later.
 */

export type KeycloakErrorKind =
  /** Keycloak answered with a non-2xx status; `status` and Keycloak's error text are set. */
  | 'http'
  /** No answer at all: connection refused or reset, DNS or TLS failure. */
  | 'unreachable'
  /** No answer within the request timeout. */
  | 'timeout'
  /** No admin token: the login failed now, or failed recently and is backing off. */
  | 'login'
  /** Something the operation depends on does not exist in Keycloak (the target client). */
  | 'not-found'
  /** Several Keycloak users carry exactly the wanted username. */
  | 'ambiguous'
  /** A 2xx answer whose body could not be used. */
  | 'invalid-response'
  /** A bug on our side, caught so the caller is never thrown at. */
  | 'internal';

export interface KeycloakError {
  readonly kind: KeycloakErrorKind;
  /** What was being done, in words: `create role workspace-ws1:user`. */
  readonly operation: string;
  readonly method?: string;
  /** Request path below the base URL, with its query: `/admin/realms/crownlabs/users?username=x`. */
  readonly path?: string;
  /** HTTP status, when Keycloak answered. */
  readonly status?: number;
  /** Keycloak's own error text (`errorMessage`, `error: error_description`) or the transport error. */
  readonly message: string;
}

/** Common shape of every operation's outcome: `ok` is true exactly when `errors` is empty. */
export interface KeycloakResult {
  readonly ok: boolean;
  readonly errors: readonly KeycloakError[];
}

/** One line per error, fit for a log line or a status message. */
export function formatKeycloakError(error: KeycloakError): string {
  const request = error.method && error.path ? ` (${error.method} ${error.path})` : '';
  const status = error.status !== undefined ? `${error.status} ` : '';
  return `${error.operation}${request}: ${status}${error.message}`;
}

export function formatKeycloakErrors(errors: readonly KeycloakError[]): string {
  return errors.map(formatKeycloakError).join('; ');
}

const MAX_ERROR_TEXT = 300;

/**
 * Keycloak's error text from a response body. Keycloak uses three shapes: `{"errorMessage": ...}`
 * (ErrorRepresentation, admin API validation and conflicts), `{"error", "error_description"}`
 * (OAuth endpoints) and `{"error": ...}` (JAX-RS exceptions such as "Could not find role").
 * Anything else (a proxy's HTML page) is shortened and passed on as is.
 */
export function keycloakErrorText(body: string, statusText: string): string {
  const trimmed = body.trim();
  if (trimmed === '') return statusText || 'empty response';
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
      const fields = parsed as Record<string, unknown>;
      const parts: string[] = [];
      if (typeof fields.error === 'string') parts.push(fields.error);
      if (typeof fields.error_description === 'string') parts.push(fields.error_description);
      if (typeof fields.errorMessage === 'string') parts.push(fields.errorMessage);
      if (typeof fields.field === 'string') parts.push(`field ${fields.field}`);
      if (parts.length > 0) return parts.join(': ');
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  return trimmed.length > MAX_ERROR_TEXT ? `${trimmed.slice(0, MAX_ERROR_TEXT)}…` : trimmed;
}

/** Turns a thrown value into the error it stands for; used at the module's outer edge only. */
export function internalError(operation: string, thrown: unknown): KeycloakError {
  const message = thrown instanceof Error ? thrown.message : String(thrown);
  return { kind: 'internal', operation, message };
}
