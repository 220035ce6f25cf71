/**
 * The file sinks' public-exposure allocation (docs/behaviour.md §18): no cluster to observe, so
 * every Instance asking for it is allocated in filePublicExposure's fixed order, once per compose.
 */
import type { Inventory } from '../inputs/inventory.ts';
import { objectKey, type Instance } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { effectiveEnvironments } from '../model/instance-plan.ts';
import { filePublicExposure, poolAddresses, publicExposureRequest, type AllocationResult, type AssignedPort, type PublicExposureSource } from '../model/public-exposure.ts';

/** The source compose gives planInstance (computed on first use, once per compose). */
export function filePublicExposureSource(inventory: Inventory, config: ComposerConfig): PublicExposureSource {
  let computed: Map<string, AllocationResult> | undefined;
  const compute = () => {
    if (computed) return computed;
    const requests: { instance: Instance; wanted: readonly AssignedPort[] }[] = [];
    for (const instance of inventory.instances.values()) {
      const template = inventory.templateOf(instance);
      if (!template) continue;
      const r = publicExposureRequest(inventory.level, instance, template, effectiveEnvironments(instance, template), config);
      if (r.kind === 'wanted') requests.push({ instance, wanted: r.ports });
    }
    computed = filePublicExposure(requests, poolAddresses(config));
    return computed;
  };
  return (instance) => compute().get(objectKey(instance));
}
