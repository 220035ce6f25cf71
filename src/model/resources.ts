import type { EnvironmentResources, QuantityValue } from '../inputs/types.ts';
import { addQuantities, formatQuantity, millicores, parseQuantity } from '../inputs/quantity.ts';
import { VM_MEMORY_OVERHEAD } from '../inputs/amounts.ts';

/** CPU added to a VM's limit for the virt-launcher (docs/behaviour.md §7.4), in millicores. */
const VM_CPU_LIMIT_OVERHEAD_MILLI = 500;

export interface ComputeResources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
  /**
   * e62be9e: the environment's `otherResources` (e.g. `nvidia.com/gpu`), each requested and limited
   * alike, in canonical form and sorted by name; absent when it has none (always at 2e8aeb9).
   */
  extended?: Record<string, string>;
}

/** The environment's extended resources, when it names any (docs/behaviour.md §16.3). */
function extendedResources(res: EnvironmentResources): Pick<ComputeResources, 'extended'> {
  const entries = Object.entries(res.otherResources ?? {});
  if (entries.length === 0) return {};
  return { extended: Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, canonicalQuantity(v)])) };
}

/** `cpu × reservedCPUPercentage × 10` millicores: the share of the cores a tenant is guaranteed. */
function reservedCpu(res: EnvironmentResources): string {
  return formatQuantity(millicores(res.cpu * res.reservedCPUPercentage * 10));
}

/** VMI resources (docs/behaviour.md §7.4): cpu request without overhead, limits +500m, memory +500M both ways. */
export function virtualMachineResources(res: EnvironmentResources): ComputeResources {
  const memory = formatQuantity(addQuantities(parseQuantity(res.memory), parseQuantity(VM_MEMORY_OVERHEAD)));
  return {
    requests: { cpu: reservedCpu(res), memory },
    limits: { cpu: formatQuantity(millicores(res.cpu * 1000 + VM_CPU_LIMIT_OVERHEAD_MILLI)), memory },
    ...extendedResources(res),
  };
}

/**
 * Container resources (docs/behaviour.md §7.5): no overheads, cpu limit = the cores; the
 * environment's `otherResources` (e62be9e) both requested and limited, as upstream gives them.
 */
export function containerResources(res: EnvironmentResources): ComputeResources {
  const memory = canonicalQuantity(res.memory);
  return {
    requests: { cpu: reservedCpu(res), memory },
    limits: { cpu: formatQuantity(millicores(res.cpu * 1000)), memory },
    ...extendedResources(res),
  };
}

/** A quantity from the input, printed as Kubernetes prints it (e.g. `2048Mi` → `2Gi`). */
export function canonicalQuantity(value: QuantityValue): string {
  return formatQuantity(parseQuantity(value));
}
