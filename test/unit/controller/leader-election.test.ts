import { describe, expect, it } from 'vitest';
import { LeaderElector } from '../../../src/controller/leader-election.ts';
import { KubeApiError, type KubeClient } from '../../../src/kube/client.ts';

/** One Lease in memory behind the two calls the elector makes; `failing` makes every request fail. */
function leaseServer() {
  let lease: any;
  let version = 0;
  const state = { failing: false, requests: 0 };
  const client = {
    path: (_v: string, _k: string, ns: string, name?: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name ?? ''}`,
    async request(method: string, _path: string, opts: { body?: any } = {}) {
      state.requests++;
      if (state.failing) throw new KubeApiError(503, { message: 'unavailable' }, method, _path);
      if (method === 'GET') {
        if (!lease) throw new KubeApiError(404, { message: 'not found' }, method, _path);
        return structuredClone(lease);
      }
      if (method === 'POST') {
        if (lease) throw new KubeApiError(409, { message: 'exists' }, method, _path);
        lease = { ...opts.body, metadata: { ...opts.body.metadata, resourceVersion: String(++version) } };
        return lease;
      }
      if (opts.body.metadata.resourceVersion !== lease.metadata.resourceVersion) throw new KubeApiError(409, { message: 'conflict' }, method, _path);
      lease = { ...opts.body, metadata: { ...opts.body.metadata, resourceVersion: String(++version) } };
      return lease;
    },
  };
  return {
    client: client as unknown as KubeClient,
    state,
    holder: () => lease?.spec?.holderIdentity,
    lease: () => lease,
    take: (id: string) => (lease.spec.holderIdentity = id),
    /** A Lease another process holds, last renewed `agoMs` ago. */
    heldBy: (id: string, agoMs: number, durationSeconds = 15) => {
      const at = new Date(Date.now() - agoMs).toISOString().replace('Z', '000Z');
      lease = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'l', namespace: 'ns', resourceVersion: String(++version) },
        spec: { holderIdentity: id, leaseDurationSeconds: durationSeconds, acquireTime: at, renewTime: at, leaseTransitions: 3 },
      };
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('leader election', () => {
  it('keeps leading through renewals that fail for less than the renew deadline', async () => {
    const server = leaseServer();
    let lost = 0;
    const elector = new LeaderElector(server.client, { namespace: 'ns', name: 'l', identity: 'a', retryPeriodMs: 10, renewDeadlineMs: 300, onLost: () => lost++ });
    await elector.acquire();
    server.state.failing = true;
    await sleep(100);
    server.state.failing = false;
    await sleep(60);
    expect(lost).toBe(0);
    expect(elector.isLeader).toBe(true);
    await elector.release();
  });

  it('gives leadership up once renewals have failed for the renew deadline', async () => {
    const server = leaseServer();
    let lost = 0;
    const elector = new LeaderElector(server.client, { namespace: 'ns', name: 'l', identity: 'a', retryPeriodMs: 10, renewDeadlineMs: 100, onLost: () => lost++ });
    await elector.acquire();
    server.state.failing = true;
    await sleep(250);
    expect(lost).toBe(1);
    expect(elector.isLeader).toBe(false);
  });

  it('gives leadership up at once when another holder has the Lease, and never takes one that has not expired', async () => {
    const server = leaseServer();
    let lost = 0;
    const elector = new LeaderElector(server.client, { namespace: 'ns', name: 'l', identity: 'a', retryPeriodMs: 10, renewDeadlineMs: 10_000, onLost: () => lost++ });
    await elector.acquire();
    server.take('b');
    await sleep(60);
    expect(lost).toBe(1);
    const second = new LeaderElector(server.client, { namespace: 'ns', name: 'l', identity: 'c', retryPeriodMs: 10, onLost: () => undefined });
    const acquired = second.acquire().then(() => true, () => false);
    expect(await Promise.race([acquired, sleep(80).then(() => false)])).toBe(false);
    expect(server.holder()).toBe('b');
    await second.release();
  });
});

/** Whether `p` settles within `ms`. */
const settles = (p: Promise<unknown>, ms: number) => Promise.race([p.then(() => true, () => true), sleep(ms).then(() => false)]);

describe('leader election: taking the Lease', () => {
  const elector = (server: ReturnType<typeof leaseServer>, identity: string, onLost = () => undefined) =>
    new LeaderElector(server.client, { namespace: 'ns', name: 'l', identity, retryPeriodMs: 10, renewDeadlineMs: 10_000, leaseDurationSeconds: 15, onLost });

  it('never takes a Lease another holder renewed within its duration, even a moment before it expires', async () => {
    const server = leaseServer();
    server.heldBy('b', 14_000);
    const a = elector(server, 'a');
    expect(await settles(a.acquire(), 150)).toBe(false);
    expect(a.isLeader).toBe(false);
    expect(server.holder()).toBe('b');
    await a.release();
  });

  it('takes an expired Lease, counting a transition and marking the acquire time', async () => {
    const server = leaseServer();
    server.heldBy('b', 16_000);
    const a = elector(server, 'a');
    await a.acquire();
    expect(a.isLeader).toBe(true);
    expect(server.lease().spec).toMatchObject({ holderIdentity: 'a', leaseTransitions: 4, leaseDurationSeconds: 15 });
    expect(Date.now() - Date.parse(server.lease().spec.acquireTime)).toBeLessThan(1000);
    await a.release();
  });

  it('takes a released Lease (no holder) at once, even unexpired', async () => {
    const server = leaseServer();
    server.heldBy('', 0);
    const a = elector(server, 'a');
    expect(await settles(a.acquire(), 150)).toBe(true);
    expect(server.holder()).toBe('a');
    await a.release();
  });

  it('renewing its own Lease keeps the acquire time and the transition count', async () => {
    const server = leaseServer();
    const a = elector(server, 'a');
    await a.acquire();
    const { acquireTime, leaseTransitions } = server.lease().spec;
    const renewed = server.lease().spec.renewTime;
    await sleep(60);
    expect(server.lease().spec).toMatchObject({ holderIdentity: 'a', acquireTime, leaseTransitions });
    expect(server.lease().spec.renewTime > renewed).toBe(true);
    await a.release();
  });

  it.each([
    ['a free Lease (both create it)', (_s: ReturnType<typeof leaseServer>) => undefined],
    ['an expired Lease (both update the same version)', (s: ReturnType<typeof leaseServer>) => s.heldBy('old', 60_000)],
  ])('never two leaders racing for %s, through many renewals', async (_what, prepare) => {
    const server = leaseServer();
    prepare(server);
    const electors = ['a', 'b', 'c'].map((id) => elector(server, id));
    const acquired = electors.map((e) => e.acquire().catch(() => undefined));
    for (let i = 0; i < 20; i++) {
      await sleep(10);
      const leaders = electors.filter((e) => e.isLeader);
      expect(leaders.length).toBeLessThanOrEqual(1);
      if (leaders.length) expect(server.holder()).toBe(leaders[0].identity);
    }
    expect(electors.filter((e) => e.isLeader)).toHaveLength(1);
    for (const e of electors) await e.release();
    await Promise.all(acquired);
  });
});
