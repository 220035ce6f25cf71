/**
 * Public exposure (docs/behaviour.md §18, API level e62be9e): whether an Instance asks for a
 * LoadBalancer Service, and the pure allocator choosing its address and ports given those taken.
 * The controller serializes its calls (src/controller/public-exposure-allocator.ts); the file
 * sinks call it in a fixed order (filePublicExposure).
 */
import type { ComposerConfig } from '../config/config.ts';
import { expandIpPool, ipv4ToNumber } from '../config/ip-pool.ts';
import { objectKey, type Environment, type Instance, type PublicExposurePort, type Template } from '../inputs/types.ts';
import type { ApiLevel } from '../inputs/api-level.ts';
import { canon } from './naming.ts';

/** First port given to a request for port 0 (upstream's BasePortForAutomaticAssignment: the IANA ephemeral range). */
export const PE_BASE_PORT = 49152;
/** Suffix of the Service's name, and value of its component label (upstream's). */
export const PE_COMPONENT = 'pe';
export const PE_COMPONENT_LABEL = 'crownlabs.polito.it/component';

export type Protocol = 'TCP' | 'UDP' | 'SCTP';

export interface AssignedPort {
  name: string;
  port: number;
  targetPort: number;
  protocol: Protocol;
}

export interface Allocation {
  ip: string;
  ports: AssignedPort[];
}

/** Ports taken per address, by the other Instances. */
export type TakenPorts = ReadonlyMap<string, ReadonlySet<number>>;

/** What an Instance asks for, as far as its spec, Template and the configuration say. */
export type PublicExposureRequest =
  | { kind: 'none' }
  | { kind: 'refused'; reason: string; message: string }
  | { kind: 'wanted'; ports: AssignedPort[] };

/** The reason of a request no address can answer now (others may free ports later). */
export const ALLOCATION_FAILED = 'PublicExposureAllocationFailed';

export const MULTI_ENV_MESSAGE = 'Public exposure is not allowed for templates with multiple environments';

/**
 * Upstream's order: nothing unless e62be9e, running and asking for ports; then the Template's
 * permission, then one environment only, then the duplicate rules. Here an empty pool and a
 * Template that does not allow it are refusals with a message (upstream drops them silently).
 */
export function publicExposureRequest(level: ApiLevel, instance: Instance, template: Template, envs: readonly Environment[], config: Pick<ComposerConfig, 'publicExposureIpPool'>): PublicExposureRequest {
  const asked = instance.spec.publicExposure?.ports ?? [];
  if (level !== 'e62be9e' || instance.spec.running === false || asked.length === 0) return { kind: 'none' };
  if ((config.publicExposureIpPool ?? []).length === 0) {
    return { kind: 'refused', reason: 'PublicExposureDisabled', message: 'Public exposure is not enabled in this installation (no publicExposureIpPool configured)' };
  }
  if (!template.spec.allowPublicExposure) {
    return { kind: 'refused', reason: 'PublicExposureNotAllowed', message: `Template ${objectKey(template)} does not allow public exposure (spec.allowPublicExposure is not true)` };
  }
  if (envs.length !== 1) return { kind: 'refused', reason: 'PublicExposureMultipleEnvironments', message: MULTI_ENV_MESSAGE };
  const invalid = validatePorts(asked);
  if (invalid) return { kind: 'refused', reason: 'PublicExposureInvalid', message: `Invalid public exposure request: ${invalid}` };
  return { kind: 'wanted', ports: asked.map((p) => ({ name: p.name, port: p.port ?? 0, targetPort: p.targetPort, protocol: p.protocol ?? 'TCP' })) };
}

/** Upstream's duplicate rules, in its order: a targetPort twice, or a port other than 0 twice. */
export function validatePorts(ports: readonly PublicExposurePort[]): string | undefined {
  const targets = new Set<number>();
  const requested = new Set<number>();
  for (const p of ports) {
    if (targets.has(p.targetPort)) return `duplicate desired targetPort ${p.targetPort} found in public exposure request`;
    targets.add(p.targetPort);
    const port = p.port ?? 0;
    if (port !== 0) {
      if (requested.has(port)) return `duplicate requested port ${port} found in public exposure request`;
      requested.add(port);
    }
  }
  return undefined;
}

/**
 * The order addresses are tried in: the current one first while it is in the pool, then those
 * already holding ports (fewer addresses in use), then the free ones, each group in address order.
 * Upstream sorts both groups as strings and also tries used addresses no longer in the pool;
 * here only pool addresses are given out, in numeric order.
 */
export function prioritizedPool(pool: readonly string[], taken: TakenPorts, current?: string): string[] {
  const byAddress = (a: string, b: string) => (ipv4ToNumber(a) ?? 0) - (ipv4ToNumber(b) ?? 0);
  const used = pool.filter((ip) => (taken.get(ip)?.size ?? 0) > 0).sort(byAddress);
  const unused = pool.filter((ip) => !((taken.get(ip)?.size ?? 0) > 0)).sort(byAddress);
  const order = [...used, ...unused];
  if (current && order.includes(current)) return [current, ...order.filter((ip) => ip !== current)];
  return order;
}

/** Requested ports on `used` (ports of this address taken by others), port 0 from PE_BASE_PORT up; undefined when one does not fit. */
export function assignPorts(wanted: readonly AssignedPort[], used: ReadonlySet<number> | undefined): AssignedPort[] | undefined {
  const busy = new Set(used ?? []);
  const out = new Map<AssignedPort, AssignedPort>();
  for (const p of wanted) {
    if (p.port === 0) continue;
    if (busy.has(p.port)) return undefined;
    busy.add(p.port);
    out.set(p, { ...p });
  }
  let next = PE_BASE_PORT;
  for (const p of wanted) {
    if (p.port !== 0) continue;
    while (next <= 65535 && busy.has(next)) next++;
    if (next > 65535) return undefined;
    busy.add(next);
    out.set(p, { ...p, port: next });
  }
  // Explicit ports first, then the automatic ones, as upstream lists them in the Service.
  return [...wanted.filter((p) => p.port !== 0), ...wanted.filter((p) => p.port === 0)].map((p) => out.get(p)!);
}

/**
 * Whether `current` still answers `wanted`: the same ports by name, target and protocol, each
 * explicit port as asked and each automatic one from the automatic range (upstream's
 * needsServiceUpdate), so an unchanged request keeps its ports.
 */
export function satisfies(current: Allocation, wanted: readonly AssignedPort[]): boolean {
  if (current.ports.length !== wanted.length) return false;
  return wanted.every((w) => {
    const held = current.ports.find((p) => p.name === w.name && p.targetPort === w.targetPort && p.protocol === w.protocol);
    return !!held && (w.port === 0 ? held.port >= PE_BASE_PORT : held.port === w.port);
  });
}

export type AllocationResult = { allocation: Allocation } | { error: string };

/**
 * Chooses the address and ports of one Instance. `taken` holds the other Instances' ports (never
 * this one's); `current` is what it holds now, kept as it is while its address is in the pool,
 * it answers the request and none of its ports is taken by another.
 */
export function allocate(wanted: readonly AssignedPort[], pool: readonly string[], taken: TakenPorts, current?: Allocation): AllocationResult {
  if (current && pool.includes(current.ip) && satisfies(current, wanted) && current.ports.every((p) => !taken.get(current.ip)?.has(p.port))) {
    return { allocation: { ip: current.ip, ports: current.ports.map((p) => ({ ...p })) } };
  }
  for (const ip of prioritizedPool(pool, taken, current?.ip)) {
    const ports = assignPorts(wanted, taken.get(ip));
    if (ports) return { allocation: { ip, ports } };
  }
  return { error: 'no available IP can support all requested ports' };
}

/** Adds an allocation to a map of taken ports (mutating it). */
export function take(taken: Map<string, Set<number>>, a: Allocation): void {
  const set = taken.get(a.ip) ?? new Set<number>();
  for (const p of a.ports) set.add(p.port);
  taken.set(a.ip, set);
}

/** The allocation an Instance's status records (externalIP and ports), when it has one. */
export function statusAllocation(instance: Instance): Allocation | undefined {
  const pe = instance.status?.publicExposure;
  if (!pe?.externalIP || !pe.ports?.length) return undefined;
  return { ip: pe.externalIP, ports: pe.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.targetPort, protocol: p.protocol ?? 'TCP' })) };
}

/** The pool's addresses (config validation has refused a bad pool already). */
export function poolAddresses(config: Pick<ComposerConfig, 'publicExposureIpPool'>): string[] {
  const r = expandIpPool(config.publicExposureIpPool ?? []);
  return 'addresses' in r ? r.addresses : [];
}

/** Names of the two objects (upstream's): the Service `<canon>-pe`, the NetworkPolicy by the Instance's own name. */
export function publicExposureServiceName(instance: Instance): string {
  return `${canon(instance.metadata.name)}-${PE_COMPONENT}`;
}
export function publicExposureNetworkPolicyName(instance: Instance): string {
  return `crownlabs-allow-publicexposure-ingress-traffic-${instance.metadata.name}`;
}

/**
 * The file sinks' allocation (no cluster to observe): first every Instance whose own
 * status.publicExposure holds an allocation that is still valid (pool, request, no collision), in
 * key order; then the others in key order, each allocated against all before it. The same inputs
 * give the same allocation, and one Instance's change moves only those after it that collide.
 */
export function filePublicExposure(
  requests: readonly { instance: Instance; wanted: readonly AssignedPort[] }[],
  pool: readonly string[],
): Map<string, AllocationResult> {
  const out = new Map<string, AllocationResult>();
  const taken = new Map<string, Set<number>>();
  const sorted = [...requests].sort((a, b) => (objectKey(a.instance) < objectKey(b.instance) ? -1 : objectKey(a.instance) > objectKey(b.instance) ? 1 : 0));
  for (const r of sorted) {
    const held = statusAllocation(r.instance);
    if (!held || !pool.includes(held.ip) || !satisfies(held, r.wanted) || held.ports.some((p) => taken.get(held.ip)?.has(p.port))) continue;
    out.set(objectKey(r.instance), { allocation: held });
    take(taken, held);
  }
  for (const r of sorted) {
    const key = objectKey(r.instance);
    if (out.has(key)) continue;
    const result = allocate(r.wanted, pool, taken);
    out.set(key, result);
    if ('allocation' in result) take(taken, result.allocation);
  }
  return out;
}

/** What the plan holds for public exposure; absent from the plan: nothing asked (or not running). */
export type PublicExposurePlan =
  | { state: 'refused'; reason: string; message: string }
  | {
      state: 'allocated';
      allocation: Allocation;
      serviceName: string;
      /** The component label and the configured common labels (upstream's: no Instance labels). */
      serviceLabels: Record<string, string>;
      /** The configured common annotations, and the address under the configured key. */
      serviceAnnotations: Record<string, string>;
      selectorLabels: Record<string, string>;
      networkPolicyName: string;
      /** The NetworkPolicy selects the Instance's Pods by `crownlabs.polito.it/instance` (upstream's). */
      instanceName: string;
    };

/** Where an Instance's allocation comes from: the controller's allocator, or filePublicExposure. */
export type PublicExposureSource = (instance: Instance, wanted: readonly AssignedPort[]) => AllocationResult | undefined;

export function publicExposurePlan(
  request: PublicExposureRequest,
  instance: Instance,
  selectorLabels: Record<string, string>,
  config: Pick<ComposerConfig, 'publicExposureCommonAnnotations' | 'publicExposureCommonLabels' | 'publicExposureLoadbalancerIpsKey'>,
  source: PublicExposureSource | undefined,
): PublicExposurePlan | undefined {
  if (request.kind === 'none') return undefined;
  if (request.kind === 'refused') return { state: 'refused', reason: request.reason, message: request.message };
  const result = source?.(instance, request.ports) ?? { error: 'no address allocated yet' };
  if ('error' in result) return { state: 'refused', reason: ALLOCATION_FAILED, message: `Public exposure failed: ${result.error}` };
  return {
    state: 'allocated',
    allocation: result.allocation,
    serviceName: publicExposureServiceName(instance),
    serviceLabels: { [PE_COMPONENT_LABEL]: PE_COMPONENT, ...config.publicExposureCommonLabels },
    serviceAnnotations: { ...config.publicExposureCommonAnnotations, [config.publicExposureLoadbalancerIpsKey]: result.allocation.ip },
    selectorLabels,
    networkPolicyName: publicExposureNetworkPolicyName(instance),
    instanceName: instance.metadata.name,
  };
}
