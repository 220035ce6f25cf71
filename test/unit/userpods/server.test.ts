import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { remoteIp, userPodsHandler } from '../../../src/userpods/server.ts';
import type { UserPodsService } from '../../../src/userpods/service.ts';

const req = (remoteAddress: string, forwarded?: string) =>
  ({ headers: forwarded ? { 'x-forwarded-for': forwarded } : {}, socket: { remoteAddress } }) as unknown as http.IncomingMessage;

describe('seed 004: the requester (silo) IP', () => {
  it('is the first X-Forwarded-For address behind a proxy or ingress', () => {
    expect(remoteIp(req('10.2.0.5', '10.0.0.21, 10.2.0.5'), '10.0.0.20')).toBe('10.0.0.21');
  });
  it('is the peer address otherwise, without the IPv4-mapped prefix', () => {
    expect(remoteIp(req('::ffff:10.0.0.22'), '10.0.0.20')).toBe('10.0.0.22');
  });
  it('stands for testingHost when the request comes from loopback (a test)', () => {
    expect(remoteIp(req('127.0.0.1'), '10.0.0.20')).toBe('10.0.0.20');
    expect(remoteIp(req('::1'), '10.0.0.20')).toBe('10.0.0.20');
  });
});

/** POSTs `size` bytes with a Content-Length or chunked; resolves with the status the client read. */
function postBody(port: number, path: string, size: number, chunked: boolean): Promise<{ status: number; connection?: string; text: string }> {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: chunked ? {} : { 'Content-Length': size } }, (res) => {
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
    server = http.createServer(userPodsHandler({} as UserPodsService, { testingHost: '10.0.0.20', log: pino({ level: 'silent' }) }));
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
