import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerToken, frontEndAuth } from '../../../src/user-pods/auth.ts';
import { proxyList } from '../../../src/user-pods/config.ts';
import { remoteIp, userPodsHandler } from '../../../src/user-pods/server.ts';
import type { UserPodsService } from '../../../src/user-pods/service.ts';

// The servers below authenticate as `crownlabs user-pods-api --auth-token-file` does.
const TOKEN = 'front-end-token';
const auth = frontEndAuth({ token: BearerToken.fromValue(TOKEN) });
const AUTHORIZATION = { Authorization: `Bearer ${TOKEN}` };

const req = (remoteAddress: string, forwarded?: string) =>
  ({ headers: forwarded ? { 'x-forwarded-for': forwarded } : {}, socket: { remoteAddress } }) as unknown as http.IncomingMessage;

describe('seed 004: the requester (silo) IP', () => {
  const proxies = proxyList(['10.2.0.0/16', 'fd00::1']);
  const ip = (peer: string, forwarded?: string, trustedProxies = proxies) => remoteIp(req(peer, forwarded), { testingHost: '10.0.0.20', trustedProxies });
  it('is the peer address when the peer is no trusted proxy: its X-Forwarded-For is ignored', () => {
    expect(ip('10.0.0.99', '10.0.0.21')).toBe('10.0.0.99');
    expect(ip('10.0.0.99', '10.0.0.21', proxyList([]))).toBe('10.0.0.99');
    // Nothing is trusted by default.
    expect(remoteIp(req('10.0.0.99', '10.0.0.21'), { testingHost: '10.0.0.20' })).toBe('10.0.0.99');
  });
  it('behind a trusted proxy: the address that proxy saw (the last X-Forwarded-For entry)', () => {
    expect(ip('10.2.0.5', '10.0.0.21')).toBe('10.0.0.21');
    expect(ip('::ffff:10.2.0.5', '10.0.0.21')).toBe('10.0.0.21');
    expect(ip('fd00::1', '10.0.0.21')).toBe('10.0.0.21');
  });
  it('entries left of the first untrusted address are the client\'s and are ignored', () => {
    expect(ip('10.2.0.5', '10.0.0.22, 10.0.0.21')).toBe('10.0.0.21');
    // Through two trusted proxies: skip them both.
    expect(ip('10.2.0.5', '10.0.0.22, 10.0.0.21, 10.2.0.9')).toBe('10.0.0.21');
  });
  it('a trusted proxy without X-Forwarded-For is the requester itself', () => {
    expect(ip('10.2.0.5')).toBe('10.2.0.5');
  });
  it('garbage in the entries a trusted proxy vouches for is a 400', () => {
    expect(() => ip('10.2.0.5', 'evil, 10.0.0.21, 10.2.0.9')).not.toThrow();
    expect(() => ip('10.2.0.5', '10.0.0.21, not-an-ip')).toThrow(/not an IP address/);
  });
  it('is the peer address without the IPv4-mapped prefix', () => {
    expect(ip('::ffff:10.0.0.22')).toBe('10.0.0.22');
  });
  it('stands for testingHost when the request comes from loopback (a test)', () => {
    expect(ip('127.0.0.1')).toBe('10.0.0.20');
    expect(ip('::1')).toBe('10.0.0.20');
    expect(ip('127.0.0.1', '10.0.0.21')).toBe('10.0.0.20');
  });
});

/** POSTs `size` bytes with a Content-Length or chunked; resolves with the status the client read. */
function postBody(port: number, path: string, size: number, chunked: boolean): Promise<{ status: number; connection?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: chunked ? AUTHORIZATION : { ...AUTHORIZATION, 'Content-Length': size } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, text }));
    });
    r.on('error', reject);
    const body = Buffer.alloc(size, '{');
    if (chunked) {
      for (let i = 0; i < size; i += 16 * 1024) r.write(body.subarray(i, i + 16 * 1024));
      r.end();
    } else r.end(body);
  });
}

describe('user pods API: a body over the cap (64 KiB)', () => {
  let server: http.Server;
  let port = 0;
  beforeAll(async () => {
    // The cap is checked before the service is asked anything.
    server = http.createServer(userPodsHandler({} as UserPodsService, { testingHost: '10.0.0.20', log: pino({ level: 'silent' }), auth }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  for (const size of [64 * 1024 + 1, 3 * 64 * 1024, 4 * 1024 * 1024]) {
    for (const chunked of [false, true]) {
      it(`${size} bytes ${chunked ? 'chunked' : 'with Content-Length'}: the client reads 413, then the connection closes`, async () => {
        const r = await postBody(port, '/create_pod', size, chunked);
        expect(r.status).toBe(413);
        expect(r.connection).toBe('close');
        expect(JSON.parse(r.text)).toEqual({ pod_name: '', error: 'request body larger than 65536 bytes' });
      });
    }
  }
});

describe('user pods API: create_pod gets the requester IP the proxy trust allows', () => {
  const seen: string[] = [];
  const service = { createPod: async (_: unknown, ip: string) => (seen.push(ip), { pod_name: 'p' }) } as unknown as UserPodsService;
  const serve = async (trustedProxies?: string[]) => {
    const server = http.createServer(userPodsHandler(service, { testingHost: '10.0.0.20', trustedProxies: trustedProxies && proxyList(trustedProxies), log: pino({ level: 'silent' }), auth }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/create_pod`;
    const body = JSON.stringify({ user_id: 'ann@ku.dk', yaml_url: 'https://x.example/p.yaml' });
    const res = await fetch(url, { method: 'POST', body, headers: { ...AUTHORIZATION, 'X-Forwarded-For': '10.0.0.21' } });
    await new Promise<void>((r) => server.close(() => r()));
    return res.status;
  };
  it('a forged X-Forwarded-For from an untrusted peer does not choose the silo', async () => {
    expect(await serve()).toBe(200);
    expect(seen.pop()).toBe('10.0.0.20');
  });
  it('from a trusted proxy it does', async () => {
    expect(await serve(['127.0.0.1'])).toBe(200);
    expect(seen.pop()).toBe('10.0.0.21');
  });
});

describe('user pods API: an unexpected failure', () => {
  it('is a 500 with an id to find it in the log, never the message (it can name another user\'s storage)', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'error' }, { write: (l: string) => void lines.push(l) });
    const leak = 'PersistentVolume "user-storage-anne-marie-ku-dk" is invalid: spec.nfs.path: /tank/storage/anne-marie@ku.dk';
    const service = { createPod: async () => Promise.reject(new Error(leak)) } as unknown as UserPodsService;
    const server = http.createServer(userPodsHandler(service, { testingHost: '10.0.0.20', log, auth }));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/create_pod`, { method: 'POST', headers: AUTHORIZATION, body: JSON.stringify({ user_id: 'anne.marie@ku.dk', yaml_url: 'https://x.example/p.yaml' }) });
      const body = (await res.json()) as { pod_name: string; error: string };
      expect(res.status).toBe(500);
      expect(body.pod_name).toBe('');
      expect(body.error).toMatch(/^internal error [0-9a-f]{8} \(details in the server log\)$/);
      expect(JSON.stringify(body)).not.toContain('/tank/storage');
      // The operator finds the details under that id.
      const id = body.error.split(' ')[2]!;
      expect(lines.map((l) => JSON.parse(l)).find((l) => l.id === id)?.err).toBe(leak);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
