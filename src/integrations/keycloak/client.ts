/**
 * The face the controllers see: one object per process, built from the `--kc-*` configuration,
 * whose operations never throw and always say what failed.
 */
import { AdminApi } from './admin-api.ts';
import type { KeycloakConfig } from './config.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS, keycloakEnabled, normalizeBaseUrl, validateKeycloakConfig } from './config.ts';
import type { KeycloakResult } from './errors.ts';
import { internalError } from './errors.ts';
import type { FetchFunction } from './http.ts';
import type { KeycloakLogger } from './logger.ts';
import { silentLogger } from './logger.ts';
import type { DeleteWorkspaceRolesResult, EnsureWorkspaceRolesResult, WorkspaceRoleDescription } from './roles.ts';
import { deleteWorkspaceRoles, ensureWorkspaceRoles } from './roles.ts';
import type { LoginBackoff, TokenStatus } from './token.ts';
import { DEFAULT_LOGIN_BACKOFF, TokenManager } from './token.ts';
import type { KeycloakUserSpec, UserDeleteResult, UserSyncResult } from './users.ts';
import { deleteUser, syncUser } from './users.ts';

export interface KeycloakClientOptions {
  /** Defaults to the global fetch (undici). */
  readonly fetch?: FetchFunction;
  /** Clock for token expiry and back-off, epoch ms. Defaults to Date.now. */
  readonly now?: () => number;
  readonly logger?: KeycloakLogger;
  /** Wait between failed logins: doubles from `initialMs` up to `maxMs`. Default 1 s … 60 s. */
  readonly loginBackoff?: Partial<LoginBackoff>;
  /** Renew the token this long before it expires (at most half its lifetime). Default 30 000 ms. */
  readonly refreshBeforeExpiryMs?: number;
}

/** Upstream's token check period (docs/behaviour.md §2.1). */
export const DEFAULT_TOKEN_UPKEEP_INTERVAL_MS = 120_000;
const DEFAULT_REFRESH_BEFORE_EXPIRY_MS = 30_000;

export class KeycloakClient {
  private readonly tokens: TokenManager;
  private readonly api: AdminApi;

  /**
   * Throws when the configuration is disabled or incomplete: that is a start-up error (upstream
   * exits with status 1), not a runtime failure. Use `createKeycloakClient` to get `undefined` for
   * a disabled configuration instead.
   */
  constructor(config: KeycloakConfig, options: KeycloakClientOptions = {}) {
    const problems = keycloakEnabled(config) ? validateKeycloakConfig(config) : ['the keycloak url is empty'];
    if (problems.length > 0) throw new Error(`invalid keycloak configuration: ${problems.join('; ')}`);

    const baseUrl = normalizeBaseUrl(config.url);
    const timeoutMs = config.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const fetchFn = options.fetch ?? globalThis.fetch;
    this.tokens = new TokenManager({
      baseUrl,
      realm: config.loginRealm,
      username: config.username,
      password: config.password,
      timeoutMs,
      fetch: fetchFn,
      now: options.now ?? Date.now,
      backoff: { ...DEFAULT_LOGIN_BACKOFF, ...options.loginBackoff },
      refreshBeforeExpiryMs: options.refreshBeforeExpiryMs ?? DEFAULT_REFRESH_BEFORE_EXPIRY_MS,
      logger: options.logger ?? silentLogger,
    });
    this.api = new AdminApi(
      { baseUrl, realm: config.targetRealm, targetClientId: config.targetClientId, timeoutMs, fetch: fetchFn },
      this.tokens,
    );
  }

  /** docs/behaviour.md §4.3: create `workspace-<ws>:manager` and `:user`, or re-apply their description. */
  ensureWorkspaceRoles(workspaceName: string, description: WorkspaceRoleDescription): Promise<EnsureWorkspaceRolesResult> {
    return guarded<Fields<EnsureWorkspaceRolesResult>>(`ensure roles of workspace ${workspaceName}`, { created: [], updated: [], unchanged: [] }, () =>
      ensureWorkspaceRoles(this.api, workspaceName, description),
    );
  }

  /** docs/behaviour.md §4.5 step 1: delete both workspace roles; already-missing roles are fine. */
  deleteWorkspaceRoles(workspaceName: string): Promise<DeleteWorkspaceRolesResult> {
    return guarded<Fields<DeleteWorkspaceRolesResult>>(`delete roles of workspace ${workspaceName}`, { deleted: [], absent: [] }, () =>
      deleteWorkspaceRoles(this.api, workspaceName),
    );
  }

  /** docs/behaviour.md §5.7: create or update the tenant's user and align its `workspace-*` client roles. */
  syncUser(user: KeycloakUserSpec): Promise<UserSyncResult> {
    return guarded<Fields<UserSyncResult>>(
      `sync user ${user.username}`,
      { created: false, updated: false, actionsEmailSent: false, rolesAdded: [], rolesRemoved: [] },
      () => syncUser(this.api, user),
    );
  }

  /** docs/behaviour.md §5.8: delete the tenant's user if there is one. */
  deleteUser(username: string): Promise<UserDeleteResult> {
    return guarded<Fields<UserDeleteResult>>(`delete user ${username}`, { deleted: false }, () => deleteUser(this.api, username));
  }

  /** Logs in now (or reuses a valid token): a start-up or readiness check. */
  login(): Promise<KeycloakResult> {
    return guarded('login', {}, async () => {
      const token = await this.tokens.getToken();
      return token.ok ? { ok: true, errors: [] } : { ok: false, errors: [token.error] };
    });
  }

  /** Token health for probes and metrics; cheap, no I/O. */
  tokenStatus(): TokenStatus {
    return this.tokens.status();
  }

  /**
   * Optional background renewal, so that a reconcile rarely waits for a login and a broken login
   * shows up in `tokenStatus()` before any reconcile needs it. Returns the function that stops it.
   */
  startTokenUpkeep(intervalMs: number = DEFAULT_TOKEN_UPKEEP_INTERVAL_MS): () => void {
    return this.tokens.startUpkeep(intervalMs);
  }
}

/** A client when Keycloak is enabled, `undefined` when its URL is empty (docs/behaviour.md Decision 5). */
export function createKeycloakClient(config: KeycloakConfig, options?: KeycloakClientOptions): KeycloakClient | undefined {
  return keycloakEnabled(config) ? new KeycloakClient(config, options) : undefined;
}

/** The fields of a result besides `ok` and `errors`. */
type Fields<R extends KeycloakResult> = Omit<R, 'ok' | 'errors'>;

/** Runs an operation, turning anything it throws (a bug) into a failed result. */
async function guarded<Fields extends object>(
  operation: string,
  empty: Fields,
  run: () => Promise<Fields & KeycloakResult>,
): Promise<Fields & KeycloakResult> {
  try {
    return await run();
  } catch (thrown) {
    return { ...empty, ok: false, errors: [internalError(operation, thrown)] };
  }
}
