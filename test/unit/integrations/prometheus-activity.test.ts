// The activity reader against a local double of Prometheus' HTTP API (/-/healthy, /api/v1/query,
// /api/v1/query_range, their JSON envelope); the integration suite runs it on a real Prometheus.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatQuery, lastChange, PrometheusActivity, PrometheusError } from '../../../src/integrations/prometheus/activity.ts';

describe('formatQuery', () => {
  it('fills %s verbatim and %q quoted, in order, as the Go flags do', () => {
    expect(formatQuery('r{ns="%s", svc=~"%s.*"}', ['tenant-a', 'green'])).toBe('r{ns="tenant-a", svc=~"green.*"}');
    expect(formatQuery('c{destination_ip=%q}', ['10.0.0.7'])).toBe('c{destination_ip="10.0.0.7"}');
    expect(formatQuery('100%% of %s', ['x'])).toBe('100% of x');
  });
});

describe('lastChange', () => {
  const start = 1000;
  it('is the latest sample whose value differs from the one before, over all series', () => {
    expect(lastChange([{ values: [[1000, '3'], [1030, '3'], [1060, '4'], [1090, '4']] }, { values: [[1000, '1'], [1030, '2'], [1060, '2']] }], start, 30)).toBe(1060_000);
  });
  it('a counter that never moved is no activity; one that first appears inside the window is, at its first sample', () => {
    expect(lastChange([{ values: [[1000, '5'], [1030, '5']] }], start, 30)).toBeUndefined();
    expect(lastChange([{ values: [[1120, '1'], [1150, '1']] }], start, 30)).toBe(1120_000);
    expect(lastChange([], start, 30)).toBeUndefined();
  });
});

describe('PrometheusActivity on a double of the HTTP API', () => {
  let server: Server;
  let url = '';
  const seen: string[] = [];
  let healthy = 200;
  let up = '1';
  beforeAll(async () => {
    server = createServer((req, res) => {
      const u = new URL(req.url!, 'http://x');
      seen.push(`${u.pathname} ${u.searchParams.get('query') ?? ''}`);
      const json = (body: unknown, code = 200) => res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      if (u.pathname === '/-/healthy') return res.writeHead(healthy).end('ok');
      if (u.pathname === '/api/v1/query') return json({ status: 'success', data: { resultType: 'vector', result: up ? [{ metric: {}, value: [1, up] }] : [] } });
      if (u.pathname === '/api/v1/query_range') {
        const q = u.searchParams.get('query')!;
        if (q.includes('broken')) return json({ status: 'error', errorType: 'bad_data', error: 'parse error' }, 400);
        const end = Number(u.searchParams.get('end'));
        const values = q.includes('10.0.0.7') ? [[end - 20, '1'], [end - 10, '2']] : [[end - 60, '4'], [end - 10, '4']];
        return json({ status: 'success', data: { resultType: 'matrix', result: [{ metric: {}, values }] } });
      }
      res.writeHead(404).end();
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((ok) => server.close(() => ok())));

  const client = (over: Partial<ConstructorParameters<typeof PrometheusActivity>[0]> = {}) =>
    new PrometheusActivity({ url, available: ['count(up{a="1"})', 'count(up{b="1"})'], nginxData: 'req{ns="%s",svc=~"%s.*"}', sshData: ['ssh{ip=%q}'], stepMs: 10_000, lookbackMs: 60_000, timeoutMs: 2000, ...over }, () => 1_000_000_000);

  it('asks for the Instance\'s requests and each IP\'s connections, and answers the latest change', async () => {
    seen.length = 0;
    await client().checkHealthy();
    expect(await client().lastActivity('tenant-a', 'green', ['10.0.0.7'])).toBe((1_000_000 - 10) * 1000);
    expect(seen).toContain('/api/v1/query_range req{ns="tenant-a",svc=~"green.*"}');
    expect(seen).toContain('/api/v1/query_range ssh{ip="10.0.0.7"}');
    expect(await client().lastActivity('tenant-a', 'green', [])).toBeUndefined();
  });

  it('is unhealthy when /-/healthy fails, when no source is scraped, or when it cannot be reached', async () => {
    healthy = 503;
    await expect(client().checkHealthy()).rejects.toThrow(/-\/healthy answered 503/);
    healthy = 200;
    up = '0';
    await expect(client().checkHealthy()).rejects.toThrow(/no activity source is scraped/);
    up = '';
    await expect(client().checkHealthy()).rejects.toThrow(PrometheusError);
    up = '1';
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((ok) => closed.close(() => ok()));
    await expect(client({ url: `http://127.0.0.1:${port}` }).checkHealthy()).rejects.toThrow(/-\/healthy: ECONNREFUSED/);
  });

  it('a healthy answer stands for the TTL, and any failure makes the next check ask again', async () => {
    let now = 1_000_000_000;
    const c = new PrometheusActivity({ url, available: ['count(up)'], nginxData: 'req{%s%s}', sshData: [], stepMs: 10_000, lookbackMs: 60_000, timeoutMs: 2000, healthTtlMs: 10_000 }, () => now);
    const healthChecks = () => seen.filter((l) => l.startsWith('/-/healthy')).length;
    seen.length = 0;
    await c.checkHealthy();
    await c.checkHealthy();
    expect(healthChecks()).toBe(1);
    now += 10_000;
    await c.checkHealthy();
    expect(healthChecks()).toBe(2);
    await expect(c.lastActivity('a', 'broken', [])).rejects.toThrow(/parse error/);
    await c.checkHealthy();
    expect(healthChecks()).toBe(3);
  });

  it('a query Prometheus refuses is an error naming its answer, not "no activity"', async () => {
    await expect(client({ nginxData: 'broken{%s%s}' }).lastActivity('a', 'b', [])).rejects.toThrow(/answered 400: parse error/);
  });
});
