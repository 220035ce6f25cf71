// The status-check GET (docs/behaviour.md §8.1) against a local HTTP double on 127.0.0.1.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getStatusCheck, STATUS_CHECK_MAX_BODY } from '../../../src/controller/status-check.ts';

const server = http.createServer((req, res) => {
  if (req.url === '/slow') {
    setTimeout(() => res.writeHead(200).end('{}'), 2_000);
    return;
  }
  if (req.url === '/gone') return void res.writeHead(404).end('not here');
  if (req.url === '/endless') {
    // A tenant's server that never stops answering: 1 MiB a tick, until the client goes away.
    res.writeHead(200, { 'Content-Type': 'application/json' });
    const block = Buffer.alloc(1 << 20, 0x20);
    const more = () => res.write(block) ? setImmediate(more) : res.once('drain', more);
    res.on('close', () => res.removeAllListeners('drain'));
    return void more();
  }
  if (req.url === '/limit') return void res.writeHead(200).end(`"${'x'.repeat(STATUS_CHECK_MAX_BODY - 2)}"`);
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ deadline: '2030-01-01T10:00:00Z', accept: req.headers.accept }));
});
let base = '';

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('§8.1 status check GET', () => {
  it('returns the status code and the body', async () => {
    const a = await getStatusCheck(`${base}/ok`, 1_000);
    expect(a.statusCode).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ deadline: '2030-01-01T10:00:00Z', accept: 'application/json' });
    expect(await getStatusCheck(`${base}/gone`, 1_000)).toEqual({ statusCode: 404, body: 'not here' });
  });

  it('gives up after the timeout with an error naming the URL', async () => {
    const t0 = Date.now();
    await expect(getStatusCheck(`${base}/slow`, 200)).rejects.toThrow(`status check GET ${base}/slow failed: no answer within 200 ms`);
    expect(Date.now() - t0).toBeLessThan(1_500);
  });

  it('stops reading an answer larger than the cap, long before the timeout', async () => {
    const t0 = Date.now();
    await expect(getStatusCheck(`${base}/endless`, 20_000)).rejects.toThrow(`status check GET ${base}/endless failed: the answer is larger than ${STATUS_CHECK_MAX_BODY} bytes`);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect((await getStatusCheck(`${base}/limit`, 2_000)).body).toHaveLength(STATUS_CHECK_MAX_BODY);
  });

  it('a refused connection is an error naming the URL', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    await expect(getStatusCheck(`http://127.0.0.1:${port}/x`, 1_000)).rejects.toThrow(/status check GET http:\/\/127\.0\.0\.1:\d+\/x failed: .*ECONNREFUSED/);
  });
});
