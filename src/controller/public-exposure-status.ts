/**
 * Public exposure in the Instance reconciler (docs/behaviour.md §18): the allocation decided before
 * compose (and given to it as an observation), and status.publicExposure from the plan and the
 * Service's LoadBalancer status.
 */
import type { Instance, Template } from '../inputs/types.ts';
import { effectiveEnvironments, type InstancePlan } from '../model/instance-plan.ts';
import { publicExposureRequest, type AllocationResult, type PublicExposureSource } from '../model/public-exposure.ts';
import type { PublicExposureStatusFacts } from '../model/status-shape.ts';
import type { ControllerContext } from './context.ts';
import { publicExposureAllocator, serviceAllocation } from './public-exposure-allocator.ts';
import type { CachedObject } from '../kube/informer.ts';

/** How soon an Instance refused for want of free ports asks again. */
export const PUBLIC_EXPOSURE_RETRY_MS = 30_000;

/** Decides this Instance's allocation now (or releases it) and returns it as compose's observation. */
export function decidePublicExposure(ctx: ControllerContext, instance: Instance, template: Template): PublicExposureSource {
  const allocator = publicExposureAllocator(ctx.caches, ctx.config);
  const request = publicExposureRequest(ctx.caches.inventory.level, instance, template, effectiveEnvironments(instance, template), ctx.config);
  let result: AllocationResult | undefined;
  if (request.kind === 'wanted') result = allocator.allocate(instance, request.ports);
  else allocator.release(`${instance.metadata.namespace}/${instance.metadata.name}`);
  return () => result;
}

/** The Instance is gone: its ports are free. */
export function releasePublicExposure(ctx: ControllerContext, namespace: string, name: string): void {
  publicExposureAllocator(ctx.caches, ctx.config).release(`${namespace}/${name}`);
}

/** status.publicExposure: removed when not asked; the address only from the Service's LoadBalancer status. */
export function publicExposureStatus(plan: InstancePlan, service: Record<string, unknown> | undefined): PublicExposureStatusFacts | undefined {
  const pe = plan.publicExposure;
  if (!pe) return undefined;
  if (pe.state === 'refused') return { phase: 'Error', message: pe.message };
  const ingress = (service?.status as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined)?.loadBalancer?.ingress;
  const externalIP = ingress?.[0]?.ip || undefined;
  const ports = pe.allocation.ports.map((p) => ({ ...p }));
  return externalIP
    ? { phase: 'Ready', message: 'Public exposure completed successfully.', externalIP, ports }
    : { phase: 'Provisioning', message: 'Waiting for LoadBalancer IP to be assigned.', ports };
}

/** Whether the cached public-exposure Service holds what the plan allocates (else the set must be applied). */
export function publicExposureApplied(plan: InstancePlan, service: Record<string, unknown> | undefined, ipsKey: string): boolean {
  const pe = plan.publicExposure;
  if (pe?.state !== 'allocated') return true;
  const held = service && serviceAllocation(service as unknown as CachedObject, ipsKey);
  return !!held && JSON.stringify(held) === JSON.stringify(pe.allocation);
}
