/**
 * Keycloak connection settings (docs/behaviour.md §2.1, `--kc-*` flags) and the two checks the process needs at
 * start-up: is the integration on at all, and is its configuration complete.
 */
export interface KeycloakConfig {
  /**
   * Base URL of the Keycloak server, without a trailing path to the API. Keycloak ≥ 17 serves at
   * the root (`https://sso.example.org`); older servers, or ones started with
   * `--http-relative-path=/auth`, need the prefix here (`https://sso.example.org/auth`).
   * Empty → the integration is disabled (docs/behaviour.md Decision 5).
   */
  readonly url: string;
  /** Realm of the admin account used to log in (`--kc-login-realm`), usually `master`. */
  readonly loginRealm: string;
  /** Realm where the users and the client roles live (`--kc-target-realm`). */
  readonly targetRealm: string;
  /** `clientId` (not the internal id) of the client whose client roles are managed (`--kc-target-client`). */
  readonly targetClientId: string;
  /** Admin account (`--kc-tenant-operator-user` / `--kc-tenant-operator-psw`). */
  readonly username: string;
  readonly password: string;
  /** Per-request timeout. Default 10 000 ms. */
  readonly requestTimeoutMs?: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** Keycloak is optional: an empty (or blank) URL switches the whole integration off. */
export function keycloakEnabled(config: Pick<KeycloakConfig, 'url'> | undefined): boolean {
  return config !== undefined && config.url.trim() !== '';
}

/**
 * Problems that make an enabled configuration unusable, one message per field; empty when the
 * configuration is fine or Keycloak is disabled. Upstream exits with status 1 in that case, so the
 * caller should refuse to start rather than fail every reconcile later.
 */
export function validateKeycloakConfig(config: KeycloakConfig): string[] {
  if (!keycloakEnabled(config)) return [];
  const problems: string[] = [];
  try {
    const parsed = new URL(config.url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      problems.push(`keycloak url must be http or https, got "${config.url}"`);
    }
  } catch {
    problems.push(`keycloak url is not a valid URL: "${config.url}"`);
  }
  const required: Array<[keyof KeycloakConfig, string]> = [
    ['loginRealm', 'login realm'],
    ['targetRealm', 'target realm'],
    ['targetClientId', 'target client'],
    ['username', 'admin username'],
    ['password', 'admin password'],
  ];
  for (const [key, label] of required) {
    const value = config[key];
    if (typeof value !== 'string' || value.trim() === '') {
      problems.push(`keycloak ${label} (${key}) is required when the keycloak url is set`);
    }
  }
  if (config.requestTimeoutMs !== undefined && !(config.requestTimeoutMs > 0)) {
    problems.push(`keycloak requestTimeoutMs must be a positive number, got ${config.requestTimeoutMs}`);
  }
  return problems;
}

/** The URL with trailing slashes removed, so that paths can be appended with a single `/`. */
export function normalizeBaseUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}
