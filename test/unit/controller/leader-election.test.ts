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
  return { client: client as unknown as KubeClient, state, holder: () => lease?.spec?.holderIdentity, take: (id: string) => (lease.spec.holderIdentity = id) };
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
