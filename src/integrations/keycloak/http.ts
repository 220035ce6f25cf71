/**
 * The one place that talks to the network. It turns fetch's exceptions (refused connection,
 * timeout) into KeycloakErrors, so the layers above only ever deal with values.
 */
import type { KeycloakError } from './errors.ts';
import { keycloakErrorText } from './errors.ts';

export type FetchFunction = typeof fetch;

export interface HttpRequest {
  readonly operation: string;
  readonly method: string;
  /** Base URL without trailing slash. */
  readonly baseUrl: string;
  /** Path below the base URL, already percent-encoded, starting with `/`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, string>>;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
}

export interface HttpReply {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly text: string;
}

export type HttpOutcome =
  | { readonly ok: true; readonly reply: HttpReply; readonly pathWithQuery: string }
  | { readonly ok: false; readonly error: KeycloakError };

export function pathWithQuery(path: string, query?: Readonly<Record<string, string>>): string {
  if (!query || Object.keys(query).length === 0) return path;
  return `${path}?${new URLSearchParams(query).toString()}`;
}

/** Sends one request; never throws. A non-2xx status is a successful exchange here. */
export async function sendHttp(fetchFn: FetchFunction, request: HttpRequest): Promise<HttpOutcome> {
  const target = pathWithQuery(request.path, request.query);
  try {
    const response = await fetchFn(`${request.baseUrl}${target}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    // The body is read under the same timeout signal, so a server that stalls mid-body also times out.
    const text = await response.text();
    return {
      ok: true,
      pathWithQuery: target,
      reply: { status: response.status, statusText: response.statusText, headers: response.headers, text },
    };
  } catch (thrown) {
    const isTimeout = thrown instanceof Error && (thrown.name === 'TimeoutError' || thrown.name === 'AbortError');
    return {
      ok: false,
      error: {
        kind: isTimeout ? 'timeout' : 'unreachable',
        operation: request.operation,
        method: request.method,
        path: target,
        message: isTimeout ? `no answer within ${request.timeoutMs} ms` : transportErrorText(thrown),
      },
    };
  }
}

/** The error of a completed exchange with a non-2xx status. */
export function httpStatusError(operation: string, method: string, path: string, reply: HttpReply): KeycloakError {
  return {
    kind: 'http',
    operation,
    method,
    path,
    status: reply.status,
    message: keycloakErrorText(reply.text, reply.statusText),
  };
}

/** undici wraps the interesting part (ECONNREFUSED …) in `cause`; show both. */
function transportErrorText(thrown: unknown): string {
  if (!(thrown instanceof Error)) return String(thrown);
  const cause = (thrown as Error & { cause?: unknown }).cause;
  if (cause instanceof Error) {
    const code = (cause as Error & { code?: unknown }).code;
    const detail = typeof code === 'string' && !cause.message.includes(code) ? `${code} ${cause.message}` : cause.message;
    return `${thrown.message}: ${detail}`;
  }
  return thrown.message;
}
