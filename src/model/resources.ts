import type { EnvironmentResources, QuantityValue } from '../inputs/types.ts';
import { addQuantities, formatQuantity, millicores, parseQuantity } from '../inputs/quantity.ts';
import { VM_MEMORY_OVERHEAD } from '../inputs/amounts.ts';

/** CPU added to a VM's limit for the virt-launcher (docs/behaviour.md §7.4), in millicores. */
const VM_CPU_LIMIT_OVERHEAD_MILLI = 500;

export interface ComputeResources {
  requests: { cpu: string; memory: string };
  limits: { cpu: string; memory: string };
  /** e62be9e: extended resources (`nvidia.com/gpu`), requested and limited alike; absent: none. */
  other?: Record<string, string>;
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
  };
}

/**
 * Container resources (docs/behaviour.md §7.5): no overheads, cpu limit = the cores; the
 * environment's `otherResources` (e62be9e) both requested and limited, as upstream gives them.
 */
export function containerResources(res: EnvironmentResources): ComputeResources {
  const memory = canonicalQuantity(res.memory);
  const other = Object.entries(res.otherResources ?? {});
  return {
    requests: { cpu: reservedCpu(res), memory },
    limits: { cpu: formatQuantity(millicores(res.cpu * 1000)), memory },
    ...(other.length ? { other: Object.fromEntries(other.map(([k, v]) => [k, canonicalQuantity(v)])) } : {}),
  };
}

/** A quantity from the input, printed as Kubernetes prints it (e.g. `2048Mi` → `2Gi`). */
export function canonicalQuantity(value: QuantityValue): string {
  return formatQuantity(parseQuantity(value));
}
