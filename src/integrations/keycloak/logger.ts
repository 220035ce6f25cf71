/**
 * The little the module logs (login failures and recoveries). The controller passes its own
 * structured logger; the default says nothing, because results already carry every failure.
 */
export interface KeycloakLogger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: KeycloakLogger = {
  info() {},
  warn() {},
};
