import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseDuration } from '../../../src/cli/controller.ts';
import { liveHoldsRendered, firstDifference } from '../../../src/controller/live-compare.ts';
import { prettyNameFor } from '../../../src/controller/pretty-name.ts';
import { jitter, parseRetryAfter, rateLimitKey, ResourceRateLimiter, TokenBucket } from '../../../src/kube/client.ts';
import { WorkQueue } from '../../../src/controller/work-queue.ts';
import { parseAddr } from '../../../src/kube/http-endpoints.ts';

describe('live-compare', () => {
  it('accepts server-added fields and canonicalised quantities, rejects changed values', () => {
    const rendered = { kind: 'ResourceQuota', spec: { hard: { 'limits.cpu': '1000m', 'limits.memory': '1Gi' } } };
    expect(liveHoldsRendered(rendered, { kind: 'ResourceQuota', spec: { hard: { 'limits.cpu': '1', 'limits.memory': '1Gi' } }, status: {} })).toBe(true);
    expect(liveHoldsRendered(rendered, { kind: 'ResourceQuota', spec: { hard: { 'limits.cpu': '2', 'limits.memory': '1Gi' } } })).toBe(false);
    expect(firstDifference(rendered, { kind: 'ResourceQuota', spec: { hard: { 'limits.cpu': '2' } } })).toBe('/spec/hard/limits.cpu');
  });
  it('compares list elements by position and length', () => {
    expect(liveHoldsRendered({ a: [{ x: 1 }] }, { a: [{ x: 1, defaulted: 'TCP' }] })).toBe(true);
    expect(liveHoldsRendered({ a: [{ x: 1 }] }, { a: [{ x: 1 }, { x: 2 }] })).toBe(false);
  });
  it('compares Secret stringData with the live base64 data', () => {
    expect(liveHoldsRendered({ kind: 'Secret', stringData: { k: 'v' } }, { kind: 'Secret', data: { k: Buffer.from('v').toString('base64') } })).toBe(true);
    expect(liveHoldsRendered({ kind: 'Secret', stringData: { k: 'v' } }, { kind: 'Secret', data: { k: Buffer.from('w').toString('base64') } })).toBe(false);
  });
  it('a missing live object never holds anything', () => {
    expect(liveHoldsRendered({ kind: 'X' }, undefined)).toBe(false);
  });
});

describe('work queue', () => {
  it('de-duplicates keys, never runs one key twice at once, re-runs a key added while it runs', async () => {
    const q = new WorkQueue({ workers: 3 });
    const runs: string[] = [];
    let concurrentA = 0;
    let maxConcurrentA = 0;
    q.run(
      async (key) => {
        runs.push(key);
        if (key === 'a') {
          concurrentA++;
          maxConcurrentA = Math.max(maxConcurrentA, concurrentA);
          await new Promise((r) => setTimeout(r, 20));
          concurrentA--;
        }
      },
      () => undefined,
    );
    q.add('a');
    q.add('a');
    q.add('b');
    await new Promise((r) => setTimeout(r, 5));
    q.add('a'); // while a runs: once more afterwards
    q.add('a');
    await new Promise((r) => setTimeout(r, 80));
    await q.idle();
    expect(runs.filter((k) => k === 'a')).toHaveLength(2);
    expect(runs.filter((k) => k === 'b')).toHaveLength(1);
    expect(maxConcurrentA).toBe(1);
    await q.stop();
  });
  it('backs off exponentially per key and forgets after a success', () => {
    const q = new WorkQueue({ workers: 1, baseDelayMs: 100, maxDelayMs: 1000, random: () => 0 });
    expect([q.backoff('k'), q.backoff('k'), q.backoff('k'), q.backoff('k'), q.backoff('k')]).toEqual([100, 200, 400, 800, 1000]);
    expect(q.backoff('other')).toBe(100);
    q.forget('k');
    expect(q.backoff('k')).toBe(100);
  });
  it('jitters the back-off (no lockstep) and never retries before the server\'s Retry-After', () => {
    const q = new WorkQueue({ workers: 1, baseDelayMs: 100, maxDelayMs: 10_000 });
    const first = Array.from({ length: 50 }, (_, i) => q.backoff(`k${i}`));
    expect(Math.min(...first)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...first)).toBeLessThanOrEqual(120);
    expect(new Set(first).size).toBeGreaterThan(5);
    expect(q.backoff('k0', 3000)).toBe(3000);
  });
  it('a key waiting on a timer keeps its earliest due time', async () => {
    const q = new WorkQueue({ workers: 1 });
    const runs: number[] = [];
    const t0 = Date.now();
    q.run(async () => void runs.push(Date.now() - t0), () => undefined);
    q.addAfter('k', 30);
    q.addAfter('k', 10_000); // a later resync does not postpone the earlier retry
    await new Promise((r) => setTimeout(r, 80));
    expect(runs).toHaveLength(1);
    expect(q.waiting).toBe(0);
    await q.stop();
  });
  it('a failed key waits for the Retry-After the API server asked for', async () => {
    const q = new WorkQueue({ workers: 1, baseDelayMs: 1 });
    const at: number[] = [];
    const t0 = Date.now();
    q.run(async () => {
      at.push(Date.now() - t0);
      if (at.length === 1) throw Object.assign(new Error('429'), { retryAfterMs: 150 });
    }, () => undefined);
    q.add('k');
    await new Promise((r) => setTimeout(r, 300));
    expect(at).toHaveLength(2);
    expect(at[1] - at[0]).toBeGreaterThanOrEqual(145);
    await q.stop();
  });
  it('retries a failing key', async () => {
    const q = new WorkQueue({ workers: 1, baseDelayMs: 5 });
    let n = 0;
    q.run(async () => {
      if (++n < 3) throw new Error('boom');
    }, () => undefined);
    q.add('k');
    await new Promise((r) => setTimeout(r, 100));
    expect(n).toBe(3);
    await q.stop();
  });
  it('addAfter: one delayed add per key, replaced by a later one, cancellable; huge delays are clamped', async () => {
    const q = new WorkQueue({ workers: 1 });
    const runs: string[] = [];
    q.run(async (key) => void runs.push(key), () => undefined);
    q.addAfter('a', 10_000);
    q.addAfter('a', 20); // replaces the 10 s one
    q.addAfter('b', 20);
    q.cancelAfter('b');
    q.addAfter('c', 400 * 86_400_000); // 400 days: kept pending, not fired at once
    await new Promise((r) => setTimeout(r, 80));
    expect(runs).toEqual(['a']);
    expect(q.hasDelayed('a')).toBe(false);
    expect(q.hasDelayed('b')).toBe(false);
    expect(q.hasDelayed('c')).toBe(true);
    await q.stop();
  });
});

describe('kube client helpers', () => {
  it('reads Retry-After as seconds or an HTTP date, capped at a minute', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThan(3000);
    expect(parseRetryAfter('86400')).toBe(60_000);
    expect(parseRetryAfter(undefined)).toBeUndefined();
    expect(parseRetryAfter('soon')).toBeUndefined();
  });
  it('jitter only stretches a delay, by at most the fraction', () => {
    expect(jitter(1000, 0.2, () => 0)).toBe(1000);
    expect(jitter(1000, 0.2, () => 0.999)).toBeLessThanOrEqual(1200);
  });
});

describe('token bucket (fake clock)', () => {
  afterEach(() => vi.useRealTimers());

  /** How many of `n` takes have passed, after each of the given clock advances (ms). */
  async function passed(take: () => Promise<void>, n: number, steps: number[]): Promise<number[]> {
    let done = 0;
    for (let i = 0; i < n; i++) void take().then(() => done++);
    const out: number[] = [];
    for (const ms of steps) {
      await vi.advanceTimersByTimeAsync(ms);
      out.push(done);
    }
    return out;
  }

  it('lets a burst through at once, then paces at qps', async () => {
    vi.useFakeTimers();
    const b = new TokenBucket(50, 5);
    // 5 at once, then one every 20 ms (at 20, 40, 60, 80, 100 ms).
    expect(await passed(() => b.take(), 10, [0, 20, 59, 1, 19, 1])).toEqual([5, 6, 8, 9, 9, 10]);
  });

  it('limits each resource type on its own, as the Go operators\' one REST client per type', async () => {
    vi.useFakeTimers();
    const l = new ResourceRateLimiter(10, 2);
    const dep = (sub = '') => () => l.take('PATCH', `/apis/apps/v1/namespaces/ns/deployments/d${sub}`);
    const svc = () => l.take('PATCH', '/api/v1/namespaces/ns/services/s');
    // The Deployments' bucket is drained; Services (and lists of Deployments) still have theirs.
    expect(await passed(dep(), 2, [0])).toEqual([2]);
    expect(await passed(svc, 2, [0])).toEqual([2]);
    expect(await passed(() => l.take('GET', '/apis/apps/v1/deployments'), 2, [0])).toEqual([2]);
    // The status subresource shares the Deployments' bucket: 10/s.
    expect(await passed(dep('/status'), 2, [0, 99, 1, 100])).toEqual([0, 0, 1, 2]);
  });

  it('qps 0 is no limit', async () => {
    vi.useFakeTimers();
    const l = new ResourceRateLimiter(0, 1);
    expect(await passed(() => l.take('PATCH', '/api/v1/namespaces/ns/services/s'), 50, [0])).toEqual([50]);
  });
});

describe('rateLimitKey', () => {
  it.each([
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d', 'apps/v1/deployments'],
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/d/status', 'apps/v1/deployments'],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments/d', 'apps/v1/deployments'],
    ['GET', '/apis/apps/v1/deployments?labelSelector=a%3Db&limit=500', 'apps/v1/deployments (list)'],
    ['GET', '/apis/apps/v1/namespaces/ns/deployments', 'apps/v1/deployments (list)'],
    ['DELETE', '/api/v1/namespaces/ns/services/s', 'v1/services'],
    ['PATCH', '/api/v1/namespaces/tenant-a', 'v1/namespaces'],
    ['PUT', '/api/v1/namespaces/tenant-a/finalize', 'v1/namespaces'],
    ['PATCH', '/api/v1/namespaces/status/services/s', 'v1/services'],
    ['GET', '/api/v1/namespaces', 'v1/namespaces (list)'],
    ['PATCH', '/apis/crownlabs.polito.it/v1alpha2/namespaces/ns/instances/i/status', 'crownlabs.polito.it/v1alpha2/instances'],
    ['PUT', '/apis/coordination.k8s.io/v1/namespaces/default/leases/l', 'coordination.k8s.io/v1/leases'],
    ['PATCH', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/b', 'rbac.authorization.k8s.io/v1/clusterrolebindings'],
    ['GET', '/version', '/version'],
  ])('%s %s → %s', (method, path, key) => {
    expect(rateLimitKey(method, path)).toBe(key);
  });
});

describe('small pure helpers', () => {
  it('prettyName is two Title-Cased words derived from the UID', () => {
    const a = prettyNameFor('6f2c0a4e-1d3b-4c5a-9e8f-0123456789ab');
    expect(a).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(prettyNameFor('6f2c0a4e-1d3b-4c5a-9e8f-0123456789ab')).toBe(a);
  });
  it('parseDuration reads Go-style durations', () => {
    expect(parseDuration('10h')).toBe(36_000_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(() => parseDuration('ten')).toThrow();
  });
  it('parseAddr reads [host]:port', () => {
    expect(parseAddr(':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(parseAddr('127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
  });
});
