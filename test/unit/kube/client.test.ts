import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { KubeClient } from '../../../src/kube/client.ts';
import { makeServingCert } from '../../support/tls.ts';

/** Watch events as the API server streams them (one JSON object a line), cut at awkward places. */
const WATCH_EVENTS = [
  { type: 'ADDED', object: { metadata: { name: 'a', annotations: { note: 'ünïcödé ✓'.repeat(50) } } } },
  { type: 'MODIFIED', object: { metadata: { name: 'b' }, data: { big: 'x'.repeat(70_000) } } },
  { type: 'DELETED', object: { metadata: { name: 'c' } } },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
];
async function streamWatch(res: import('node:http').ServerResponse): Promise<void> {
  res.setHeader('Content-Type', 'application/json');
  const bytes = Buffer.from(WATCH_EVENTS.map((e, i) => JSON.stringify(e) + (i === 1 ? '\n\n' : '\n')).join(''));
  // Pieces of 1, 5 and 333 bytes and the rest: a line split over many chunks, and a chunk holding
  // the end of one event and the start of the next; a cut inside a multi-byte character.
  const cuts = [1, 6, 339, 70_100, bytes.length];
  let from = 0;
  for (const to of cuts) {
    res.write(bytes.subarray(from, to));
    from = to;
    await new Promise((r) => setTimeout(r, 5));
  }
  res.end();
}

describe('KubeClient connections', () => {
  let dir: string;
  let server: https.Server;
  let kubeConfig: KubeConfig;
  let connections = 0;
  const bodies: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kube-client-'));
    const cert = await makeServingCert(dir, undefined, 'kube-client-test');
    server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      if (req.url?.includes('watch=true')) return void streamWatch(res);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        bodies.push(`${req.method} ${body}`);
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ kind: 'Namespace', metadata: { name: req.url?.split('/').pop() } }));
      });
    });
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(cert.caPem).toString('base64') }],
      users: [{ name: 'u', token: 'secret-token' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('reuses one TLS connection for sequential requests (keep-alive), with the kubeconfig CA and token', async () => {
    const client = new KubeClient(kubeConfig, { qps: 1000, burst: 1000 });
    const seen: string[] = [];
    server.on('request', (req) => seen.push(String(req.headers.authorization)));
    connections = 0;
    for (let i = 0; i < 20; i++) {
      const ns = await client.request<{ metadata: { name: string } }>('GET', `/api/v1/namespaces/ns-${i}`);
      expect(ns.metadata.name).toBe(`ns-${i}`);
    }
    expect(connections).toBe(1);
    expect(new Set(seen)).toEqual(new Set(['Bearer secret-token']));
  });

  it('sends every write (POST, PUT, PATCH) with field manager crownlabs-composer unless the caller names one; reads and deletes without', async () => {
    const client = new KubeClient(kubeConfig, { qps: 1000, burst: 1000 });
    const seen: string[] = [];
    const record = (req: http.IncomingMessage) => seen.push(`${req.method} ${new URL(String(req.url), 'https://x').searchParams.get('fieldManager')}`);
    server.on('request', record);
    try {
      for (const method of ['POST', 'PUT', 'PATCH', 'GET', 'DELETE']) await client.request(method, '/api/v1/namespaces/fm', method === 'GET' ? {} : { body: {} });
      await client.request('PATCH', '/api/v1/namespaces/fm', { body: {}, query: { fieldManager: 'other' } });
    } finally {
      server.off('request', record);
    }
    expect(seen).toEqual(['POST crownlabs-composer', 'PUT crownlabs-composer', 'PATCH crownlabs-composer', 'GET null', 'DELETE null', 'PATCH other']);
  });

  it('goes through the proxy-url of the kubeconfig (an HTTP CONNECT proxy), for requests and watches', async () => {
    const tunnels: string[] = [];
    // The tunnels outlive their requests (kept alive): closing the proxy waits for them.
    const sockets: Duplex[] = [];
    const proxy = http.createServer((_req, res) => res.writeHead(405).end());
    proxy.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
      tunnels.push(String(req.url));
      sockets.push(client);
      const [host, port] = String(req.url).split(':');
      const upstream = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    try {
      const cluster = kubeConfig.getCurrentCluster()!;
      const proxied = new KubeConfig();
      proxied.loadFromOptions({
        clusters: [{ ...cluster, proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}` }],
        users: [{ name: 'u', token: 'secret-token' }],
        contexts: [{ name: 'x', cluster: cluster.name, user: 'u' }],
        currentContext: 'x',
      });
      const client = new KubeClient(proxied, { qps: 1000, burst: 1000 });
      const ns = await client.request<{ metadata: { name: string } }>('GET', '/api/v1/namespaces/via-proxy');
      expect(ns.metadata.name).toBe('via-proxy');
      const events: unknown[] = [];
      await new Promise<void>((resolve, reject) => client.watch('/api/v1/configmaps', {}, (e) => events.push(e), (err) => (err ? reject(err) : resolve())));
      expect(events).toEqual(WATCH_EVENTS);
      const target = new URL(cluster.server).host;
      expect(new Set(tunnels)).toEqual(new Set([target]));
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => proxy.close(r));
    }
  });

  it('opens more connections only for concurrent requests', async () => {
    const client = new KubeClient(kubeConfig, { qps: 1000, burst: 1000 });
    connections = 0;
    await Promise.all(Array.from({ length: 4 }, (_, i) => client.request('GET', `/api/v1/namespaces/a-${i}`)));
    const afterBurst = connections;
    expect(afterBurst).toBeGreaterThanOrEqual(1);
    expect(afterBurst).toBeLessThanOrEqual(4);
    for (let i = 0; i < 10; i++) await client.request('GET', `/api/v1/namespaces/b-${i}`);
    expect(connections).toBe(afterBurst);
  });

  it('rate-limits per resource type: a drained Deployments bucket does not hold a Service write (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    try {
      const passed: string[] = [];
      const client = new KubeClient(kubeConfig, { qps: 1, burst: 1, onRequest: (r) => passed.push(r.path) });
      const sent = ['/apis/apps/v1/namespaces/ns/deployments/a', '/apis/apps/v1/namespaces/ns/deployments/b', '/api/v1/namespaces/ns/services/s'].map((p) =>
        client.request('PATCH', p, { body: {}, contentType: 'application/merge-patch+json' }),
      );
      await vi.advanceTimersByTimeAsync(0);
      expect(passed).toEqual(['/apis/apps/v1/namespaces/ns/deployments/a', '/api/v1/namespaces/ns/services/s']);
      await vi.advanceTimersByTimeAsync(1000);
      expect(passed).toContain('/apis/apps/v1/namespaces/ns/deployments/b');
      vi.useRealTimers();
      await Promise.all(sent);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a watch hands over each event whole, however the stream is cut into chunks', async () => {
    const client = new KubeClient(kubeConfig, { qps: 1000, burst: 1000 });
    const events: unknown[] = [];
    await new Promise<void>((resolve, reject) => client.watch('/api/v1/configmaps', {}, (e) => events.push(e), (err) => (err ? reject(err) : resolve())));
    expect(events).toEqual(WATCH_EVENTS);
  });

  it('sends a DELETE body with its length, so that the server reads it and the kept-alive connection stays usable', async () => {
    const client = new KubeClient(kubeConfig, { qps: 1000, burst: 1000 });
    bodies.length = 0;
    const options = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'u-1' } };
    await client.request('DELETE', '/api/v1/namespaces/gone', { body: options });
    const after = await client.request<{ metadata: { name: string } }>('GET', '/api/v1/namespaces/next');
    expect(after.metadata.name).toBe('next');
    expect(bodies).toEqual([`DELETE ${JSON.stringify(options)}`, 'GET ']);
  });
});
