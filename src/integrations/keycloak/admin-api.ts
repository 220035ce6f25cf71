/**
 * Authenticated calls to the Admin REST API of the target realm (`/admin/realms/{realm}/...`), and
 * the internal id of the target client, which every client-role path needs instead of its clientId.
 */
import type { KeycloakError } from './errors.ts';
import type { FetchFunction, HttpOutcome } from './http.ts';
import { httpStatusError, sendHttp } from './http.ts';
import { arrayOf, isClient } from './representations.ts';
import type { TokenManager, TokenOutcome } from './token.ts';

export interface AdminApiSettings {
  readonly baseUrl: string;
  readonly realm: string;
  readonly targetClientId: string;
  readonly timeoutMs: number;
  readonly fetch: FetchFunction;
}

export interface RequestOptions {
  readonly query?: Readonly<Record<string, string>>;
  /** Sent as JSON. */
  readonly body?: unknown;
}

export type ApiOutcome<T> =
  | { readonly ok: true; readonly status: number; readonly body: T; readonly headers: Headers }
  | { readonly ok: false; readonly error: KeycloakError };

export type ClientIdOutcome = { readonly ok: true; readonly id: string } | { readonly ok: false; readonly error: KeycloakError };

export class AdminApi {
  private clientInternalId: string | undefined;

  constructor(
    private readonly settings: AdminApiSettings,
    private readonly tokens: TokenManager,
  ) {}

  get realm(): string {
    return this.settings.realm;
  }

  get targetClientId(): string {
    return this.settings.targetClientId;
  }

  /** A token now, so that an operation can give up at once when Keycloak cannot be logged into. */
  login(): Promise<TokenOutcome> {
    return this.tokens.getToken();
  }

  /**
   * One call below `/admin/realms/{realm}`; each path segment is percent-encoded here (role names
   * contain `:`). A 401 means the token died early (revoked, server restarted): log in again and
   * retry once. The answer's body is parsed as JSON when there is one.
   */
  async request<T = unknown>(
    operation: string,
    method: string,
    segments: readonly string[],
    options: RequestOptions = {},
  ): Promise<ApiOutcome<T>> {
    const path = [`/admin/realms/${encodeURIComponent(this.settings.realm)}`, ...segments.map(encodeURIComponent)].join('/');
    const first = await this.tokens.getToken();
    if (!first.ok) return { ok: false, error: first.error };
    let sent = await this.send(operation, method, path, options, first.token);
    if (sent.ok && sent.reply.status === 401) {
      this.tokens.invalidate(first.token);
      const second = await this.tokens.getToken();
      if (!second.ok) return { ok: false, error: second.error };
      sent = await this.send(operation, method, path, options, second.token);
    }
    if (!sent.ok) return { ok: false, error: sent.error };

    const { reply } = sent;
    if (reply.status < 200 || reply.status > 299) {
      const error = httpStatusError(operation, method, sent.pathWithQuery, reply);
      // The client was deleted and maybe re-created under a new internal id: resolve it again next time.
      if (reply.status === 404 && error.message.includes('Could not find client')) this.clientInternalId = undefined;
      return { ok: false, error };
    }
    if (reply.text.trim() === '') return { ok: true, status: reply.status, body: undefined as T, headers: reply.headers };
    try {
      return { ok: true, status: reply.status, body: JSON.parse(reply.text) as T, headers: reply.headers };
    } catch {
      return {
        ok: false,
        error: {
          kind: 'invalid-response',
          operation,
          method,
          path: sent.pathWithQuery,
          status: reply.status,
          message: 'response body is not JSON',
        },
      };
    }
  }

  /** Internal id of the target client, looked up once by clientId (`GET /clients?clientId=`) and cached. */
  async targetClient(): Promise<ClientIdOutcome> {
    if (this.clientInternalId !== undefined) return { ok: true, id: this.clientInternalId };
    const { targetClientId } = this.settings;
    const operation = `resolve client "${targetClientId}"`;
    const found = await this.request<unknown>(operation, 'GET', ['clients'], { query: { clientId: targetClientId } });
    if (!found.ok) return found;
    const clients = arrayOf(found.body, isClient);
    if (!clients) {
      return { ok: false, error: { kind: 'invalid-response', operation, message: 'client list is not an array of clients' } };
    }
    // The query is exact on current servers; compare anyway in case a server treats it as a search.
    const match = clients.find((client) => client.clientId === targetClientId);
    if (!match) {
      return {
        ok: false,
        error: {
          kind: 'not-found',
          operation,
          message: `no client with clientId "${targetClientId}" in realm "${this.settings.realm}"`,
        },
      };
    }
    this.clientInternalId = match.id;
    return { ok: true, id: match.id };
  }

  private send(operation: string, method: string, path: string, options: RequestOptions, token: string): Promise<HttpOutcome> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json' };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    return sendHttp(this.settings.fetch, {
      operation,
      method,
      baseUrl: this.settings.baseUrl,
      path,
      query: options.query,
      headers,
      body,
      timeoutMs: this.settings.timeoutMs,
    });
  }
}
