/**
 * An HTTPS server's key pair from a directory holding `tls.crt` and `tls.key` (a mounted Secret,
 * controller-runtime's convention), polled and swapped in when the files change, so a rotated
 * certificate needs no restart.
 */
import { readFileSync } from 'node:fs';
import type http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';
import { parseAddr } from './http-endpoints.ts';

const POLL_MS = 10_000;

export interface TlsFiles {
  /** Directory of tls.crt and tls.key. */
  certDir: string;
  /** PEM file of the CA client certificates must be signed by (then every client is asked for one). */
  clientCaFile?: string;
}

/** The files' contents; throws naming the file that cannot be read. */
export function readTlsFiles(files: TlsFiles): SecureContextOptions & { cert: Buffer; key: Buffer } {
  const read = (file: string) => {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new Error(`${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  };
  const pair = { cert: read(path.join(files.certDir, 'tls.crt')), key: read(path.join(files.certDir, 'tls.key')) };
  return files.clientCaFile ? { ...pair, ca: read(files.clientCaFile) } : pair;
}

const same = (a: SecureContextOptions, b: SecureContextOptions) => ['cert', 'key', 'ca'].every((k) => String(a[k as 'cert']) === String(b[k as 'cert']));

/**
 * Listens with HTTPS on `addr`. With a client CA, a client certificate is asked for and checked
 * against it, but the handshake does not fail without one: the handler sees `socket.authorized`
 * and answers 401 (and a probe of an unprotected path still works).
 */
export async function listenTls(
  addr: string,
  handler: http.RequestListener,
  tls: TlsFiles | (() => SecureContextOptions),
  log?: Logger,
  pollMs = POLL_MS,
): Promise<{ server: https.Server; address: string }> {
  const { host, port } = parseAddr(addr);
  const load = typeof tls === 'function' ? tls : () => readTlsFiles(tls);
  let current = load();
  const clientCa = typeof tls !== 'function' && tls.clientCaFile !== undefined;
  const server = https.createServer({ ...current, requestCert: clientCa, rejectUnauthorized: false }, handler);
  server.on('tlsClientError', (err) => log?.debug({ err: err.message }, 'TLS handshake failed'));
  if (typeof tls !== 'function') {
    const poll = setInterval(() => {
      try {
        const next = load();
        if (same(next, current)) return;
        server.setSecureContext(next);
        current = next;
        log?.info({ certDir: tls.certDir }, 'TLS certificate reloaded');
      } catch (e) {
        // A half-written pair fails here; the next poll picks up the rest.
        log?.warn({ certDir: tls.certDir, err: (e as Error).message }, 'TLS files unreadable or invalid; keeping the current ones');
      }
    }, pollMs);
    poll.unref();
    server.on('close', () => clearInterval(poll));
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const a = server.address() as AddressInfo;
  return { server, address: `${a.address}:${a.port}` };
}
