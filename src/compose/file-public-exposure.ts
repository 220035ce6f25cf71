/**
 * The file sinks' public-exposure allocation (docs/behaviour.md §18): no cluster to observe, so
 * every Instance asking for it is allocated in filePublicExposure's fixed order, once per compose.
 */
import type { Inventory } from '../inputs/inventory.ts';
import { objectKey, type Instance } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { effectiveEnvironments } from '../model/instance-plan.ts';
import { filePublicExposure, poolAddresses, publicExposureRequest, type AllocationResult, type AssignedPort, type PublicExposureSource } from '../model/public-exposure.ts';

/** The source compose gives planInstance, and the keys of the Instances every allocation depends on. */
export function filePublicExposureSource(inventory: Inventory, config: ComposerConfig): { source: PublicExposureSource; dependsOn: () => string[] } {
  let computed: { results: Map<string, AllocationResult>; keys: string[] } | undefined;
  const compute = () => {
    if (computed) return computed;
    const requests: { instance: Instance; wanted: readonly AssignedPort[] }[] = [];
    for (const instance of inventory.instances.values()) {
      const template = inventory.templateOf(instance);
      if (!template) continue;
      const r = publicExposureRequest(inventory.level, instance, template, effectiveEnvironments(instance, template), config);
      if (r.kind === 'wanted') requests.push({ instance, wanted: r.ports });
    }
    computed = { results: filePublicExposure(requests, poolAddresses(config)), keys: requests.map((r) => `Instance/${objectKey(r.instance)}`).sort() };
    return computed;
  };
  return {
    source: (instance) => compute().results.get(objectKey(instance)),
    dependsOn: () => compute().keys,
  };
}

