// The updater's error paths against a tiny local HTTP server playing a broken registry: every
// failure is one log line, nothing is written, and the loop goes on to the next pass.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageList } from '../../../src/inputs/types.ts';
import { RegistryClient } from '../../../src/integrations/registry/client.ts';
import { runImageListLoop, runImageListPass, type ImageListWriter } from '../../../src/integrations/registry/updater.ts';

let mode: 'ok' | 'not-json' | 'bad-shape' | 'http-500' | 'tags-500' | 'hang' = 'ok';
let server: Server;
let url: string;
const requests: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req.url!);
    const json = (code: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(code, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const u = new URL(req.url!, 'http://x');
    if (mode === 'hang') return; // never answers
    if (u.pathname === '/v2/_catalog') {
      if (mode === 'not-json') return res.end('<html>proxy error</html>');
      if (mode === 'bad-shape') return json(200, { repositories: 'oops' });
      if (mode === 'http-500') return json(500, { errors: [{ code: 'UNKNOWN' }] });
      if (u.searchParams.get('last') === null) return json(200, { repositories: ['zeta', 'alpha'] }, { Link: '</v2/_catalog?last=alpha&n=2>; rel="next"' });
      return json(200, { repositories: ['mid'] });
    }
    const m = /^\/v2\/(.+)\/tags\/list$/.exec(u.pathname);
    if (m) {
      if (mode === 'tags-500' && m[1] === 'mid') return json(500, {});
      return json(200, { name: m[1], tags: m[1] === 'alpha' ? ['latest', '1.10', '1.9'] : m[1] === 'zeta' ? null : ['2'] });
    }
    json(404, {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function recorder() {
  const written: ImageList[] = [];
  const logs: string[] = [];
  const writer: ImageListWriter = { apply: async (l) => void written.push(l) };
  return { written, logs, writer, log: (l: string) => logs.push(l) };
}

function pass(r: ReturnType<typeof recorder>, registryUrl = url, timeoutMs = 2000) {
  return runImageListPass({
    registry: new RegistryClient({ url: registryUrl, pageSize: 2, timeoutMs }),
    writer: r.writer,
    advertisedRegistryName: 'registry.example',
    imageListName: 'vm-images',
    log: r.log,
  });
}

describe('§10 updater against a registry double', () => {
  it('follows catalog pages and writes the sorted list', async () => {
    mode = 'ok';
    const r = recorder();
    expect(await pass(r)).toEqual({ ok: true, images: 2, versions: 3 });
    expect(r.written).toHaveLength(1);
    expect(r.written[0].spec.images).toEqual([
      { name: 'alpha', versions: ['1.9', '1.10'] },
      { name: 'mid', versions: ['2'] },
    ]);
    expect(requests).toContain('/v2/_catalog?last=alpha&n=2');
  });

  it.each([
    ['not-json', /registry error.*_catalog\?n=2: malformed answer: not JSON: <html>proxy error<\/html>/],
    ['bad-shape', /registry error.*malformed answer: "repositories" is not a list of strings/],
    ['http-500', /registry error.*_catalog\?n=2: HTTP 500/],
    ['tags-500', /registry error.*\/v2\/mid\/tags\/list\?n=2: HTTP 500/],
  ] as const)('a %s answer is logged as one line and nothing is written', async (m, line) => {
    mode = m;
    const r = recorder();
    const res = await pass(r);
    expect(res.ok).toBe(false);
    expect(r.written).toEqual([]);
    expect(r.logs).toHaveLength(1);
    expect(r.logs[0]).toMatch(line);
    expect(r.logs[0]).not.toContain('\n');
  });

  it('an unreachable registry is logged (connection refused) and nothing is written', async () => {
    const closed = createServer();
    await new Promise<void>((res) => closed.listen(0, '127.0.0.1', res));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((res) => closed.close(() => res()));
    const r = recorder();
    expect((await pass(r, `http://127.0.0.1:${port}`)).ok).toBe(false);
    expect(r.logs[0]).toMatch(/registry error.*ECONNREFUSED/);
    expect(r.written).toEqual([]);
  });

  it('a registry that does not answer times out', async () => {
    mode = 'hang';
    const r = recorder();
    expect((await pass(r, url, 300)).ok).toBe(false);
    expect(r.logs[0]).toMatch(/timed out after 300 ms/);
  });

  it('an API error is logged as one line', async () => {
    mode = 'ok';
    const r = recorder();
    r.writer.apply = async () => {
      throw Object.assign(new Error('HTTP-Code: 403\nMessage: ...'), { code: 403, body: JSON.stringify({ kind: 'Status', message: 'imagelists.crownlabs.polito.it "vm-images" is forbidden' }) });
    };
    const res = await pass(r);
    expect(res).toMatchObject({ ok: false, stage: 'api' });
    expect(r.logs).toEqual(['imagelist: API error writing ImageList vm-images: HTTP 403: imagelists.crownlabs.polito.it "vm-images" is forbidden']);
  });

  it('the loop runs a pass immediately and keeps going after a failed pass', async () => {
    const r = recorder();
    const stop = new AbortController();
    let passes = 0;
    const registry = {
      catalog: async () => {
        passes++;
        if (passes === 1) throw new Error('boom');
        if (passes === 3) stop.abort();
        return ['img'];
      },
      tags: async () => ['1'],
    };
    await runImageListLoop({ registry, writer: r.writer, advertisedRegistryName: 'r', imageListName: 'l', log: r.log, intervalSeconds: 0.01, signal: stop.signal });
    expect(passes).toBe(3);
    expect(r.logs[0]).toMatch(/registry error.*unexpected: boom/);
    expect(r.written).toHaveLength(2);
  });
});
