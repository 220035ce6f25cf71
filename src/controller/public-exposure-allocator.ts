/**
 * The controller's public-exposure allocator (docs/behaviour.md §18): one per controller process,
 * so every decision is made by one synchronous call (JavaScript runs one at a time: no await
 * between reading what is taken and recording the reservation), whatever the number of workers.
 *
 * Taken by others = this process's reservations (decided, maybe not yet applied or not yet in the
 * cache), every cached public-exposure Service but the Instance's own (what a previous process or
 * another shard applied, what an Instance held before its last decision; a deleted Instance's
 * Service counts until it is garbage-collected), and
 * the status of every other Instance that has neither (what the Go operator gave before a switch,
 * or an apply that failed before a restart).
 */
import { COMPOSER } from '../model/labels.ts';
import { allocate, PE_COMPONENT, PE_COMPONENT_LABEL, poolAddresses, publicExposureServiceName, statusAllocation, take, type Allocation, type AllocationResult, type AssignedPort } from '../model/public-exposure.ts';
import type { Instance } from '../inputs/types.ts';
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
    /** Cached Instances (their status records what they were given). */
    private readonly instances: () => readonly CachedObject[],
  ) {}

  /** Decides and records the allocation of `instance`: synchronous by design (see the file comment). */
  allocate(instance: Instance, wanted: readonly AssignedPort[]): AllocationResult {
    const key = `${instance.metadata.namespace}/${instance.metadata.name}`;
    const ownService = `${instance.metadata.namespace}/${publicExposureServiceName(instance)}`;
    const taken = new Map<string, Set<number>>();
    const counted = new Set<string>([key]);
    for (const [k, a] of this.held) {
      if (k === key) continue;
      take(taken, a);
      counted.add(k);
    }
    let fromService: Allocation | undefined;
    for (const svc of this.services()) {
      const a = serviceAllocation(svc, this.ipsKey);
      if (!a) continue;
      if (`${svc.metadata.namespace}/${svc.metadata.name}` === ownService) {
        fromService = a;
        continue;
      }
      // Counted even when its Instance decided anew: the old ports stay taken until the Service holds the new ones.
      take(taken, a);
      const owner = ownerKey(svc);
      if (owner) counted.add(owner);
    }
    for (const other of this.instances()) {
      const k = `${other.metadata.namespace}/${other.metadata.name}`;
      if (counted.has(k) || other.metadata.deletionTimestamp) continue;
      const a = statusAllocation(other as unknown as Instance);
      if (a) take(taken, a);
    }
    const result = allocate(wanted, this.pool, taken, this.held.get(key) ?? fromService ?? statusAllocation(instance));
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

/** `ns/name` of the Instance a Service belongs to: our parent annotation, else its controller owner (the Go operator's). */
function ownerKey(obj: CachedObject): string | undefined {
  const parent = obj.metadata.annotations?.[COMPOSER.parentAnnotation];
  if (parent?.startsWith('Instance/')) return parent.slice('Instance/'.length);
  const owner = obj.metadata.ownerReferences?.find((o) => o.controller && o.kind === 'Instance');
  return owner ? `${obj.metadata.namespace}/${owner.name}` : undefined;
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
      () => caches.instances.list(),
    );
    ALLOCATORS.set(caches, a);
  }
  return a;
}
