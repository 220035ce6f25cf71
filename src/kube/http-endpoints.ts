/** `/metrics` on the metrics address and `/healthz`, `/readyz` (and `/ready`, as upstream) on the probe address; the capped body read our HTTP servers share. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export function parseAddr(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(':');
  const host = i > 0 ? addr.slice(0, i) : '0.0.0.0';
  const port = Number(i >= 0 ? addr.slice(i + 1) : addr);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid address "${addr}" (expected [host]:port)`);
  return { host, port };
}

export async function listen(addr: string, handler: http.RequestListener): Promise<{ server: http.Server; address: string }> {
  const { host, port } = parseAddr(addr);
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const a = server.address() as AddressInfo;
  return { server, address: `${a.address}:${a.port}` };
}

export function metricsHandler(registry: Registry): http.RequestListener {
  return (req, res) => {
    if (req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404).end('not found\n');
      return;
    }
    registry
      .metrics()
      .then((text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(text))
      .catch((e: Error) => res.writeHead(500).end(e.message));
  };
}

export function healthHandler(ready: () => boolean): http.RequestListener {
  return (req, res) => {
    const path = req.url?.split('?')[0];
    if (path === '/healthz') res.writeHead(200).end('ok\n');
    else if (path === '/readyz' || path === '/ready') {
      if (ready()) res.writeHead(200).end('ok\n');
      else res.writeHead(503).end('caches not synced\n');
    } else res.writeHead(404).end('not found\n');
  };
}

export function close(server: http.Server | undefined): Promise<void> {
  return new Promise((r) => (server ? server.close(() => r()) : r()));
}

/** How much of an oversized body is still read (and dropped) before the 413 is sent, and for how long. */
export const DRAIN_AFTER_CAP = { bytes: 1024 * 1024, ms: 5_000 };

/**
 * A request's body, at most `maxBytes`; past that `tooLarge()` rejects. The rest of the body is
 * read and dropped first (up to DRAIN_AFTER_CAP): closing a socket with unread data makes the
 * kernel send a reset, which discards the 413 before the client reads it. The caller answers 413
 * with `Connection: close`.
 */
export function readCappedBody(req: http.IncomingMessage, maxBytes: number, tooLarge: () => Error, drain = DRAIN_AFTER_CAP): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    let timer: NodeJS.Timeout | undefined;
    const giveUp = () => {
      clearTimeout(timer);
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      reject(tooLarge());
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (!over && size > maxBytes) {
        over = true;
        chunks = [];
        timer = setTimeout(giveUp, drain.ms);
      }
      if (!over) chunks.push(c);
      else if (size - maxBytes > drain.bytes) giveUp();
    };
    const onEnd = () => {
      clearTimeout(timer);
      if (over) reject(tooLarge());
      else resolve(Buffer.concat(chunks));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}
