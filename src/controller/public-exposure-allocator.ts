/**
 * The controller's public-exposure allocator (docs/behaviour.md §18): one per controller process,
 * so every decision is made by one synchronous call (JavaScript runs one at a time: no await
 * between reading what is taken and recording the reservation), whatever the number of workers.
 *
 * Taken = this process's reservations (decided, maybe not yet applied or not yet in the cache)
 * plus every cached public-exposure Service of another live Instance (what a previous process or
 * another shard applied: after a restart the cache is synced before the first reconcile).
 */
import { COMPOSER } from '../model/labels.ts';
import { allocate, PE_COMPONENT, PE_COMPONENT_LABEL, poolAddresses, take, type Allocation, type AllocationResult, type AssignedPort } from '../model/public-exposure.ts';
import type { Caches } from './caches.ts';
import type { ComposerConfig } from '../config/config.ts';
import type { CachedObject } from '../kube/informer.ts';

export class PublicExposureAllocator {
  /** Instance key (`ns/name`) → its reservation. */
  private readonly held = new Map<string, Allocation>();

  constructor(
    private readonly pool: readonly string[],
    private readonly ipsKey: string,
    /** Cached public-exposure Services (any owner). */
    private readonly services: () => readonly CachedObject[],
    /** Whether an Instance is still in the cache (a deleted one's Service no longer counts). */
    private readonly instanceLive: (key: string) => boolean,
  ) {}

  /** Decides and records the allocation of `key`: synchronous by design (see the file comment). */
  allocate(key: string, wanted: readonly AssignedPort[]): AllocationResult {
    const taken = new Map<string, Set<number>>();
    for (const [k, a] of this.held) if (k !== key) take(taken, a);
    let fromService: Allocation | undefined;
    for (const svc of this.services()) {
      const owner = ownerKey(svc);
      const a = serviceAllocation(svc, this.ipsKey);
      if (!a || !owner) continue;
      if (owner === key) fromService = a;
      else if (!this.held.has(owner) && this.instanceLive(owner)) take(taken, a);
    }
    const result = allocate(wanted, this.pool, taken, this.held.get(key) ?? fromService);
    if ('allocation' in result) this.held.set(key, result.allocation);
    else this.held.delete(key);
    return result;
  }

  /** The Instance no longer asks (stopped, edited, refused) or is gone: its ports are free for others. */
  release(key: string): void {
    this.held.delete(key);
  }

  /** Reservations held (tests, metrics). */
  reservations(): ReadonlyMap<string, Allocation> {
    return this.held;
  }
}

/** `ns/name` of the Instance a set's object belongs to, from its parent annotation. */
function ownerKey(obj: CachedObject): string | undefined {
  const parent = obj.metadata.annotations?.[COMPOSER.parentAnnotation];
  return parent?.startsWith('Instance/') ? parent.slice('Instance/'.length) : undefined;
}

/** The allocation a public-exposure Service records: the address asked for (annotation) and its ports. */
export function serviceAllocation(svc: CachedObject, ipsKey: string): Allocation | undefined {
  if (svc.metadata.labels?.[PE_COMPONENT_LABEL] !== PE_COMPONENT) return undefined;
  const spec = (svc.spec ?? {}) as { type?: string; ports?: { name?: string; port: number; targetPort?: number | string; protocol?: string }[] };
  const ip = svc.metadata.annotations?.[ipsKey];
  if (spec.type !== 'LoadBalancer' || !ip) return undefined;
  return {
    ip,
    ports: (spec.ports ?? []).map((p) => ({ name: p.name ?? '', port: p.port, targetPort: Number(p.targetPort ?? p.port), protocol: (p.protocol ?? 'TCP') as AssignedPort['protocol'] })),
  };
}

const ALLOCATORS = new WeakMap<Caches, PublicExposureAllocator>();

/** The process's allocator (one per Caches, which is one per controller run). */
export function publicExposureAllocator(caches: Caches, config: ComposerConfig): PublicExposureAllocator {
  let a = ALLOCATORS.get(caches);
  if (!a) {
    a = new PublicExposureAllocator(
      poolAddresses(config),
      config.publicExposureLoadbalancerIpsKey,
      () => caches.child('v1', 'Service')?.list() ?? [],
      (key) => {
        const [ns, name] = key.split('/');
        return !!caches.instances.get(ns, name);
      },
    );
    ALLOCATORS.set(caches, a);
  }
  return a;
}
