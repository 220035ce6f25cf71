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

/** A request's body, at most `maxBytes`: past that the request is dropped and `tooLarge()` rejects. */
export function readCappedBody(req: http.IncomingMessage, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > maxBytes) {
        reject(tooLarge());
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
