// The controller's public-exposure allocator (docs/behaviour.md §18): decisions that interleave with
// applies and cache updates never give one address:port twice, survive a restart, count what the
// Go operator gave, and free ports when an Instance stops asking.
import { describe, expect, it } from 'vitest';
import { PublicExposureAllocator } from '../../../src/controller/public-exposure-allocator.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';
import type { Instance } from '../../../src/inputs/types.ts';
import { COMPOSER } from '../../../src/model/labels.ts';
import { PE_BASE_PORT, type Allocation, type AssignedPort } from '../../../src/model/public-exposure.ts';

const KEY = 'metallb.universe.tf/loadBalancerIPs';
const instance = (name: string, status?: Allocation, extra: Partial<Instance['metadata']> = {}): Instance =>
  ({
    metadata: { name, namespace: 'tenant-a', ...extra },
    spec: {},
    ...(status ? { status: { publicExposure: { externalIP: status.ip, ports: status.ports, phase: 'Ready' } } } : {}),
  }) as unknown as Instance;
const service = (owner: string, a: Allocation, how: 'ours' | 'go' = 'ours'): CachedObject =>
  ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: `${owner}-pe`,
      namespace: 'tenant-a',
      labels: { 'crownlabs.polito.it/component': 'pe' },
      annotations: { [KEY]: a.ip, ...(how === 'ours' ? { [COMPOSER.parentAnnotation]: `Instance/tenant-a/${owner}` } : {}) },
      ...(how === 'go' ? { ownerReferences: [{ uid: 'u', kind: 'Instance', name: owner, controller: true }] } : {}),
    },
    spec: { type: 'LoadBalancer', ports: a.ports },
  }) as unknown as CachedObject;
const web = (port = 0): AssignedPort => ({ name: 'web', port, targetPort: 80, protocol: 'TCP' });
const ssh = (port = 2222): AssignedPort => ({ name: 'ssh', port, targetPort: 22, protocol: 'TCP' });
const endpoints = (allocations: Iterable<Allocation>) => [...allocations].flatMap((a) => a.ports.map((p) => `${a.ip}:${p.port}`));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('decisions interleaved with applies and cache updates', () => {
  it('200 concurrent requests never allocate one address:port twice', async () => {
    const pool = ['10.0.0.1', '10.0.0.2'];
    // What the API server holds, and the cache that sees it later.
    const applied = new Map<string, CachedObject>();
    const cache: CachedObject[] = [];
    const instances: Instance[] = Array.from({ length: 200 }, (_, i) => instance(`i${i}`));
    const allocator = new PublicExposureAllocator(pool, KEY, () => cache, () => instances as unknown as CachedObject[]);
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const reconcile = async (inst: Instance, wanted: AssignedPort[]) => {
      await sleep(random() * 5);
      const r = allocator.allocate(inst, wanted);
      if (!('allocation' in r)) throw new Error(r.error);
      await sleep(random() * 5); // the apply
      applied.set(inst.metadata.name, service(inst.metadata.name, r.allocation));
      await sleep(random() * 20); // the watch event reaching the cache
      const i = cache.findIndex((s) => s.metadata.name === `${inst.metadata.name}-pe`);
      if (i >= 0) cache.splice(i, 1);
      cache.push(applied.get(inst.metadata.name)!);
    };
    // Every third asks for ssh on 2222 too: at most one per address can have it, so those spill over.
    const wanted = (i: number) => (i % 3 === 0 && i < 6 ? [web(), ssh()] : [web()]);
    await Promise.all(instances.map((inst, i) => reconcile(inst, wanted(i))));
    // A second round (every Instance reconciled again, in another order) keeps every decision.
    const first = new Map([...allocator.reservations()].map(([k, a]) => [k, JSON.stringify(a)]));
    await Promise.all([...instances].reverse().map((inst, i) => reconcile(inst, wanted(199 - i))));
    expect(new Map([...allocator.reservations()].map(([k, a]) => [k, JSON.stringify(a)]))).toEqual(first);

    const all = endpoints(allocator.reservations().values());
    expect(all.length).toBe(202);
    expect(new Set(all).size).toBe(all.length);
    expect(endpoints([...applied.values()].map((s) => ({ ip: s.metadata.annotations![KEY], ports: (s.spec as { ports: AssignedPort[] }).ports })))).toEqual(expect.arrayContaining(all));
    // Used addresses first: everything fits on the first address but the second ssh.
    expect(all.filter((e) => e.startsWith('10.0.0.2:'))).toEqual(['10.0.0.2:2222', `10.0.0.2:${PE_BASE_PORT}`]);
  });
});

describe('what is taken, from the cluster', () => {
  it('after a restart, every Instance keeps the address and ports its Service holds', () => {
    const held = { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 5)] };
    const other = { ip: '10.0.0.1', ports: [web(PE_BASE_PORT)] };
    const allocator = new PublicExposureAllocator(['10.0.0.1'], KEY, () => [service('a', held), service('b', other)], () => []);
    expect(allocator.allocate(instance('a'), [web()])).toEqual({ allocation: held });
    // A new Instance gets a port neither holds.
    expect(allocator.allocate(instance('c'), [web()])).toEqual({ allocation: { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 1)] } });
  });

  it('a switch from the Go operator: its Services (owner reference, no parent annotation) and the statuses it wrote are taken', () => {
    const goSvc = { ip: '10.0.0.1', ports: [web(PE_BASE_PORT)] };
    const goStatusOnly = { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 1)] };
    const instances = [instance('go1', goSvc), instance('go2', goStatusOnly), instance('new')];
    const allocator = new PublicExposureAllocator(['10.0.0.1'], KEY, () => [service('go1', goSvc, 'go')], () => instances as unknown as CachedObject[]);
    expect(allocator.allocate(instances[2], [web()])).toEqual({ allocation: { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 2)] } });
    // The Instance whose Service is missing keeps what its status says it was given.
    expect(allocator.allocate(instances[1], [web()])).toEqual({ allocation: goStatusOnly });
  });

  it('a deleted Instance\'s Service counts until it is gone; a released reservation frees its ports at once', () => {
    const services: CachedObject[] = [service('gone', { ip: '10.0.0.1', ports: [web(PE_BASE_PORT)] })];
    const allocator = new PublicExposureAllocator(['10.0.0.1'], KEY, () => services, () => []);
    expect(allocator.allocate(instance('a'), [web()])).toEqual({ allocation: { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 1)] } });
    services.length = 0; // garbage-collected
    expect(allocator.allocate(instance('b'), [web()])).toEqual({ allocation: { ip: '10.0.0.1', ports: [web(PE_BASE_PORT)] } });
    allocator.release('tenant-a/a');
    expect(allocator.allocate(instance('c'), [web()])).toEqual({ allocation: { ip: '10.0.0.1', ports: [web(PE_BASE_PORT + 1)] } });
  });

  it('ports an Instance leaves stay taken until its Service no longer holds them', () => {
    const services = [service('a', { ip: '10.0.0.1', ports: [ssh(2222)] })];
    const allocator = new PublicExposureAllocator(['10.0.0.1'], KEY, () => services, () => []);
    expect(allocator.allocate(instance('a'), [ssh(2223)])).toEqual({ allocation: { ip: '10.0.0.1', ports: [ssh(2223)] } });
    // Neither the old port (still in a's Service) nor the new one (a's reservation) is free.
    expect('error' in allocator.allocate(instance('b'), [ssh(2222)])).toBe(true);
    expect('error' in allocator.allocate(instance('c'), [ssh(2223)])).toBe(true);
    services[0] = service('a', { ip: '10.0.0.1', ports: [ssh(2223)] });
    expect(allocator.allocate(instance('b'), [ssh(2222)])).toEqual({ allocation: { ip: '10.0.0.1', ports: [ssh(2222)] } });
  });
});
