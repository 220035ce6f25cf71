/**
 * Who may call the user pods API (docs/user-pods-api.md, "Authentication"): the front end proves
 * itself with a shared bearer token, a client certificate signed by a given CA, or both (every
 * configured check must pass). The API itself trusts `user_id`, so whoever passes these acts for
 * any user.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type http from 'node:http';
import type { TLSSocket } from 'node:tls';

export { isLoopbackHost } from '../kube/loopback.ts';

/** Decides a request: undefined when it may go on, otherwise why not (the 401's text). */
export interface FrontEndAuth {
  /** What is checked, for the start-up log ("bearer token", "client certificate"); empty: nothing. */
  readonly mechanisms: readonly string[];
  refusal(req: http.IncomingMessage): string | undefined;
}

/** Explicitly no check (`--insecure-no-auth`, or a test on loopback that wants none). */
export const NO_AUTH: FrontEndAuth = { mechanisms: [], refusal: () => undefined };

/** How often a token file's metadata is looked at (a mounted Secret's update swaps a symlink). */
const TOKEN_FILE_CHECK_MS = 1000;

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The expected token, from a fixed value or a file re-read when its inode, size or mtime change. */
export class BearerToken {
  private digest?: Buffer;
  private seen = '';
  private checkedAt = -Infinity;

  private constructor(
    private readonly file: string | undefined,
    value: string | undefined,
    private readonly now: () => number,
  ) {
    if (value !== undefined) this.digest = digest(value);
  }

  static fromValue(value: string): BearerToken {
    const token = value.trim();
    if (!token) throw new Error('the token is empty');
    return new BearerToken(undefined, token, Date.now);
  }

  /** Throws (with the file's name) when the file cannot be read or is empty. */
  static fromFile(file: string, now: () => number = Date.now): BearerToken {
    const t = new BearerToken(file, undefined, now);
    t.reload(true);
    return t;
  }

  /** Re-reads the file when it changed; a file that became unreadable or empty keeps the last token. */
  private reload(strict = false): void {
    const file = this.file!;
    let text: string;
    let stamp: string;
    try {
      const s = statSync(file);
      stamp = `${s.ino}:${s.size}:${s.mtimeMs}`;
      if (stamp === this.seen) return;
      text = readFileSync(file, 'utf8').trim();
    } catch (e) {
      if (strict) throw new Error(`${file}: cannot read the token: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      return;
    }
    if (!text) {
      if (strict) throw new Error(`${file}: the token file is empty`);
      return;
    }
    this.digest = digest(text);
    this.seen = stamp;
  }

  /** Constant time in the presented token: both sides are compared as SHA-256 digests. */
  matches(presented: string): boolean {
    if (this.file && this.now() - this.checkedAt >= TOKEN_FILE_CHECK_MS) {
      this.checkedAt = this.now();
      this.reload();
    }
    return timingSafeEqual(digest(presented), this.digest!);
  }
}

/** The bearer token of an `Authorization: Bearer <token>` header, or undefined. */
export function presentedToken(req: http.IncomingMessage): string | undefined {
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
  return m?.[1];
}

/** Every configured check; `clientCertificate`: the TLS server verified a client certificate (requestCert, the CA). */
export function frontEndAuth(opts: { token?: BearerToken; clientCertificate?: boolean }): FrontEndAuth {
  const mechanisms = [...(opts.clientCertificate ? ['client certificate'] : []), ...(opts.token ? ['bearer token'] : [])];
  return {
    mechanisms,
    refusal(req) {
      if (opts.clientCertificate) {
        const socket = req.socket as TLSSocket;
        if (!socket.authorized) return `a client certificate signed by the configured CA is required${socket.authorizationError ? ` (${String(socket.authorizationError)})` : ''}`;
      }
      if (opts.token) {
        const presented = presentedToken(req);
        if (presented === undefined) return 'an Authorization: Bearer token is required';
        if (!opts.token.matches(presented)) return 'the bearer token is not valid';
      }
      return undefined;
    },
  };
}
