/**
 * The admin access token: obtained with the OpenID password grant of `admin-cli`, renewed before it
 * expires, and — unlike upstream, which exits the process when a login fails (docs/behaviour.md §2.1) — kept
 * alive through outages: a failed login is reported to whoever needed the token and retried with
 * exponential back-off, while a still-valid older token keeps being used.
 */
import type { KeycloakError } from './errors.ts';
import type { FetchFunction } from './http.ts';
import { httpStatusError, sendHttp } from './http.ts';
import type { KeycloakLogger } from './logger.ts';

/** Public client every realm has; the one upstream logs in with. */
export const ADMIN_CLI_CLIENT_ID = 'admin-cli';

/** Used when neither `expires_in` nor the JWT tells the lifetime: Keycloak's default access token lifespan. */
const FALLBACK_TOKEN_LIFETIME_MS = 60_000;
/** Never schedule the upkeep timer closer than this, whatever the clock says. */
const MIN_UPKEEP_DELAY_MS = 10;

export interface LoginBackoff {
  /** Wait after the first failed login. Default 1 000 ms. */
  readonly initialMs: number;
  /** Upper bound of the doubling wait. Default 60 000 ms. */
  readonly maxMs: number;
}

export const DEFAULT_LOGIN_BACKOFF: LoginBackoff = { initialMs: 1_000, maxMs: 60_000 };

export interface TokenManagerSettings {
  readonly baseUrl: string;
  readonly realm: string;
  readonly username: string;
  readonly password: string;
  readonly timeoutMs: number;
  readonly fetch: FetchFunction;
  readonly now: () => number;
  readonly backoff: LoginBackoff;
  /** Renew this long before expiry (capped at half the token's lifetime). */
  readonly refreshBeforeExpiryMs: number;
  readonly logger: KeycloakLogger;
}

export type TokenOutcome = { readonly ok: true; readonly token: string } | { readonly ok: false; readonly error: KeycloakError };

/** A snapshot for readiness probes, metrics and logs. */
export interface TokenStatus {
  /** A token that has not expired yet is held. */
  readonly hasValidToken: boolean;
  /** Epoch ms at which the held token expires. */
  readonly expiresAt?: number;
  /** Successful logins since start. */
  readonly logins: number;
  readonly consecutiveFailures: number;
  readonly lastError?: KeycloakError;
  /** While failing: epoch ms before which no new login is attempted. */
  readonly nextAttemptAt?: number;
}

interface HeldToken {
  readonly value: string;
  readonly expiresAt: number;
  readonly refreshAt: number;
}

export class TokenManager {
  private held: HeldToken | undefined;
  private inflight: Promise<TokenOutcome> | undefined;
  private logins = 0;
  private failures = 0;
  private lastError: KeycloakError | undefined;
  private nextAttemptAt = 0;

  constructor(private readonly settings: TokenManagerSettings) {}

  /** A usable token, logging in when needed. Never rejects. Concurrent callers share one login. */
  async getToken(): Promise<TokenOutcome> {
    const now = this.settings.now();
    const held = this.held;
    if (held && now < held.refreshAt) return { ok: true, token: held.value };
    if (this.inflight) return this.inflight;
    if (this.failures > 0 && now < this.nextAttemptAt) {
      // Backing off: do not hammer a Keycloak that is down, but keep using a token that still works.
      if (held && now < held.expiresAt) return { ok: true, token: held.value };
      return { ok: false, error: this.failureReport(now) };
    }
    this.inflight = this.login().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /**
   * Forgets `token` after Keycloak rejected it (401: revoked, server restarted with new keys, clock
   * skew). Only that token: a newer one obtained meanwhile by a concurrent caller is kept.
   */
  invalidate(token: string): void {
    if (this.held?.value === token) this.held = undefined;
  }

  status(): TokenStatus {
    const now = this.settings.now();
    return {
      hasValidToken: this.held !== undefined && now < this.held.expiresAt,
      expiresAt: this.held?.expiresAt,
      logins: this.logins,
      consecutiveFailures: this.failures,
      lastError: this.lastError,
      nextAttemptAt: this.failures > 0 ? this.nextAttemptAt : undefined,
    };
  }

  /**
   * Keeps a fresh token in the background (upstream checks every 2 minutes): wakes up at the
   * refresh time of the held token or after `intervalMs`, whichever comes first, and while logins
   * fail, when the back-off allows the next attempt. The timer does not keep the process alive.
   * Returns the function that stops it.
   */
  startUpkeep(intervalMs: number): () => void {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const schedule = (delayMs: number): void => {
      if (stopped) return;
      timer = setTimeout(() => void tick(), Math.max(MIN_UPKEEP_DELAY_MS, delayMs));
      timer.unref();
    };
    const tick = async (): Promise<void> => {
      await this.getToken();
      schedule(this.nextUpkeepDelay(intervalMs));
    };
    schedule(0);
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }

  private nextUpkeepDelay(intervalMs: number): number {
    const now = this.settings.now();
    if (this.failures > 0) return this.nextAttemptAt - now;
    if (this.held) return Math.min(intervalMs, this.held.refreshAt - now);
    return intervalMs;
  }

  private async login(): Promise<TokenOutcome> {
    const { settings } = this;
    const startedAt = settings.now();
    const outcome = await this.requestToken();
    if (outcome.ok) {
      const lifetimeMs = tokenLifetimeMs(outcome.body, startedAt);
      // Measured from when the request left: errs on the early side, never on the late one.
      const expiresAt = startedAt + lifetimeMs;
      const margin = Math.min(settings.refreshBeforeExpiryMs, lifetimeMs / 2);
      this.held = { value: outcome.body.access_token, expiresAt, refreshAt: expiresAt - margin };
      this.logins += 1;
      if (this.failures > 0) {
        settings.logger.info('keycloak login succeeded again', { realm: settings.realm, failedAttempts: this.failures });
      }
      this.failures = 0;
      this.lastError = undefined;
      return { ok: true, token: this.held.value };
    }

    this.failures += 1;
    this.lastError = outcome.error;
    const now = settings.now();
    const delay = Math.min(settings.backoff.maxMs, settings.backoff.initialMs * 2 ** (this.failures - 1));
    this.nextAttemptAt = now + delay;
    settings.logger.warn('keycloak login failed', {
      realm: settings.realm,
      status: outcome.error.status,
      error: outcome.error.message,
      consecutiveFailures: this.failures,
      retryInMs: delay,
    });
    if (this.held && now < this.held.expiresAt) return { ok: true, token: this.held.value };
    return { ok: false, error: this.failureReport(now) };
  }

  private async requestToken(): Promise<{ ok: true; body: TokenResponse } | { ok: false; error: KeycloakError }> {
    const { settings } = this;
    const operation = `login to realm "${settings.realm}" as "${settings.username}"`;
    const method = 'POST';
    const path = `/realms/${encodeURIComponent(settings.realm)}/protocol/openid-connect/token`;
    const sent = await sendHttp(settings.fetch, {
      operation,
      method,
      baseUrl: settings.baseUrl,
      path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: ADMIN_CLI_CLIENT_ID,
        username: settings.username,
        password: settings.password,
      }).toString(),
      timeoutMs: settings.timeoutMs,
    });
    if (!sent.ok) return { ok: false, error: { ...sent.error, kind: 'login', message: `${sent.error.kind}: ${sent.error.message}` } };
    const { reply } = sent;
    if (reply.status !== 200) return { ok: false, error: { ...httpStatusError(operation, method, path, reply), kind: 'login' } };
    const body = parseTokenResponse(reply.text);
    if (!body) {
      return {
        ok: false,
        error: { kind: 'login', operation, method, path, status: reply.status, message: 'token response has no access_token' },
      };
    }
    return { ok: true, body };
  }

  private failureReport(now: number): KeycloakError {
    const base = this.lastError ?? { kind: 'login' as const, operation: 'login', message: 'login failed' };
    const waitMs = Math.max(0, this.nextAttemptAt - now);
    return {
      ...base,
      message: `${base.message} (${this.failures} consecutive failed login(s); next attempt in ${waitMs} ms)`,
    };
  }
}

interface TokenResponse {
  readonly access_token: string;
  readonly expires_in?: number;
}

function parseTokenResponse(text: string): TokenResponse | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object') return undefined;
    const fields = parsed as Record<string, unknown>;
    if (typeof fields.access_token !== 'string' || fields.access_token === '') return undefined;
    return {
      access_token: fields.access_token,
      expires_in: typeof fields.expires_in === 'number' ? fields.expires_in : undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * Lifetime of a freshly issued token. `expires_in` is relative, so it is immune to clock skew
 * between us and Keycloak; the JWT's absolute `exp` is the fallback.
 */
function tokenLifetimeMs(body: TokenResponse, issuedAt: number): number {
  if (body.expires_in !== undefined && body.expires_in > 0) return body.expires_in * 1000;
  const exp = decodeJwtExpiry(body.access_token);
  if (exp !== undefined && exp * 1000 > issuedAt) return exp * 1000 - issuedAt;
  return FALLBACK_TOKEN_LIFETIME_MS;
}

/** The `exp` claim (seconds since the epoch) of a JWT, without verifying it; undefined if unreadable. */
export function decodeJwtExpiry(jwt: string): number | undefined {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (claims === null || typeof claims !== 'object') return undefined;
    const exp = (claims as Record<string, unknown>).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined;
  } catch {
    return undefined;
  }
}
