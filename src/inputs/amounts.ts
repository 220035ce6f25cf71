// The amounts of an input (a Template's resources, a Tenant's or Workspace's quota) that the CRD
// pattern lets through but that render objects the API server refuses, or a VM that cannot start.
import { exceedsAmount, isQuantity, MAX_INT64, parseQuantity } from './quantity.ts';
import { isVirtualMachineType, type EnvironmentType } from './types.ts';

/** One refused amount: where (a JSON pointer), its value and why. */
export interface AmountProblem {
  pointer: string;
  value: unknown;
  message: string;
}

/** Memory KubeVirt needs beyond the guest's (docs/behaviour.md §7.4): a VM's rendered requests add it (src/model/resources.ts). */
export const VM_MEMORY_OVERHEAD = '500M';
const VM_MEMORY_OVERHEAD_BYTES = 500_000_000n; // VM_MEMORY_OVERHEAD in bytes
/** KubeVirt's VMI admitter refuses a memory request under 1M; a VM with less cannot boot either. */
const VM_MIN_MEMORY = '1M';

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isNegative(v: unknown): boolean {
  if (typeof v === 'number') return v < 0;
  // A quantity string is negative when its sign is '-' and its number is not zero ("-0", "-0.0Gi").
  const m = typeof v === 'string' ? /^-([0-9]*\.?[0-9]*)/.exec(v) : null;
  return m !== null && Number(m[1]) > 0;
}

/**
 * What Kubernetes holds of an amount is an int64 (bytes; millicores for CPU): a larger one is
 * clamped (binary suffixes, so `8Ei` = 2^63 bytes becomes 2^63-1) or overflows where it is used.
 */
function beyondInt64(v: unknown, unit: 'bytes' | 'cores', headroom = 0n): string | undefined {
  if (!isQuantity(v)) return undefined;
  const limit = unit === 'cores' ? MAX_INT64 / 1000n : MAX_INT64 - headroom;
  let over: boolean;
  try {
    over = exceedsAmount(v, limit);
  } catch {
    return undefined; // not a quantity: the schema reports it
  }
  if (!over) return undefined;
  const what = unit === 'cores' ? `${limit} cores (2^63-1 millicores)` : headroom ? `${limit} bytes (2^63-1 less KubeVirt's 500M overhead)` : `${limit} bytes (2^63-1)`;
  return `${JSON.stringify(v)}: more than Kubernetes can hold, at most ${what}`;
}

/** The refused amounts of one input object of `kind`. */
export function amountProblems(kind: string, value: Record<string, unknown>): AmountProblem[] {
  const spec = isMap(value.spec) ? value.spec : {};
  const out: AmountProblem[] = [];
  const check = (pointer: string, v: unknown, unit: 'bytes' | 'cores', vm = false) => {
    if (isNegative(v)) return void out.push({ pointer, value: v, message: `${JSON.stringify(v)}: must be greater than or equal to 0` });
    const over = beyondInt64(v, unit, vm ? VM_MEMORY_OVERHEAD_BYTES : 0n);
    if (over) return void out.push({ pointer, value: v, message: over });
    if (vm && isQuantity(v) && parseQuantity(v).cmp(VM_MIN_MEMORY) < 0) {
      out.push({ pointer, value: v, message: `${JSON.stringify(v)}: a VM needs at least ${VM_MIN_MEMORY} of memory (KubeVirt's smallest; it cannot boot with less)` });
    }
  };
  if (kind === 'Template' && Array.isArray(spec.environmentList)) {
    spec.environmentList.forEach((env, i) => {
      if (!isMap(env) || !isMap(env.resources)) return;
      const at = `/spec/environmentList/${i}/resources`;
      const vm = isVirtualMachineType(env.environmentType as EnvironmentType);
      for (const [k, v] of Object.entries(env.resources)) {
        if (k === 'memory') check(`${at}/${k}`, v, 'bytes', vm);
        else if (k === 'disk') check(`${at}/${k}`, v, 'bytes');
        else if (isNegative(v)) out.push({ pointer: `${at}/${k}`, value: v, message: `${JSON.stringify(v)}: must be greater than or equal to 0` });
      }
    });
  }
  if ((kind === 'Tenant' || kind === 'Workspace') && isMap(spec.quota)) {
    for (const [k, v] of Object.entries(spec.quota)) {
      if (k === 'cpu') check(`/spec/quota/${k}`, v, 'cores');
      else if (k === 'memory') check(`/spec/quota/${k}`, v, 'bytes');
      else if (isNegative(v)) out.push({ pointer: `/spec/quota/${k}`, value: v, message: `${JSON.stringify(v)}: must be greater than or equal to 0` });
    }
  }
  return out;
}
