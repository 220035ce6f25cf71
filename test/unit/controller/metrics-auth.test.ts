import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MetricsAccessReview, secureMetricsHandler } from '../../../src/controller/metrics-auth.ts';

/** An API server double: tokens it knows, users allowed `get /metrics`, and every review it was sent. */
function reviewingApi(users: Record<string, string>, allowed: string[]) {
  const sent: { path: string; body: any }[] = [];
  let failing = false;
  return {
    sent,
    fail: (on: boolean) => void (failing = on),
    request: async (_method: string, path: string, opts: { body?: any } = {}): Promise<any> => {
      sent.push({ path, body: opts.body });
      if (failing) throw new Error('POST -> 503: unavailable');
      if (path.endsWith('/tokenreviews')) {
        const user = users[opts.body.spec.token];
        return { status: user ? { authenticated: true, user: { username: user, uid: `uid-${user}`, groups: ['system:serviceaccounts'] } } : { authenticated: false, error: 'invalid bearer token' } };
      }
      const a = opts.body.spec;
      return { status: { allowed: allowed.includes(a.user) && a.nonResourceAttributes.path === '/metrics' && a.nonResourceAttributes.verb === 'get' } };
    },
  };
}

describe('controller /metrics behind a TokenReview and a SubjectAccessReview', () => {
  const registry = new Registry();
  new Counter({ name: 'crownlabs_controller_reconciles_total', help: 'h', registers: [registry] }).inc();
  const api = reviewingApi({ 'prom-token': 'system:serviceaccount:monitoring:prometheus', 'other-token': 'system:serviceaccount:x:nobody' }, ['system:serviceaccount:monitoring:prometheus']);
  let now = 0;
  const review = new MetricsAccessReview(api, { allowTtlMs: 60_000, denyTtlMs: 10_000, now: () => now });
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    server = http.createServer(secureMetricsHandler(registry, review));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));
  const scrape = (token?: string, path = '/metrics') => fetch(`${url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {} });

  it('no token: 401 without asking the API server; an unknown token: 401; a user without the right: 403; with it: the metrics', async () => {
    const none = await scrape();
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(api.sent).toEqual([]);
    expect((await scrape('forged')).status).toBe(401);
    expect((await scrape('other-token')).status).toBe(403);
    const ok = await scrape('prom-token');
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('crownlabs_controller_reconciles_total 1');
    // The SubjectAccessReview names the reviewed user and a non-resource get of /metrics.
    const sar = api.sent.filter((s) => s.path === '/apis/authorization.k8s.io/v1/subjectaccessreviews').map((s) => s.body.spec);
    expect(sar.at(-1)).toEqual({ user: 'system:serviceaccount:monitoring:prometheus', uid: 'uid-system:serviceaccount:monitoring:prometheus', groups: ['system:serviceaccounts'], nonResourceAttributes: { path: '/metrics', verb: 'get' } });
    expect((await scrape('prom-token', '/other')).status).toBe(404);
  });

  it('answers are cached briefly: allowed for a minute, refusals for 10 s, keyed by the token', async () => {
    api.sent.length = 0;
    now += 3_600_000;
    for (let i = 0; i < 5; i++) expect((await scrape('prom-token')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await scrape('other-token')).status).toBe(403);
    expect(api.sent).toHaveLength(4);
    now += 10_001;
    expect((await scrape('other-token')).status).toBe(403);
    expect((await scrape('prom-token')).status).toBe(200);
    expect(api.sent).toHaveLength(6);
    now += 50_000;
    expect((await scrape('prom-token')).status).toBe(200);
    expect(api.sent).toHaveLength(8);
  });

  it('an API server that cannot review: 500, and nothing is cached', async () => {
    now += 3_600_000;
    api.fail(true);
    expect((await scrape('prom-token')).status).toBe(500);
    api.fail(false);
    expect((await scrape('prom-token')).status).toBe(200);
  });
});
