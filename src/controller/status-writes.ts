/** Status writes in the shape of the controller's API level (src/model/status-shape.ts, docs/behaviour.md §16.2). */
import { instanceWireStatus, tenantWireStatus, type InstanceStatusFacts, type TenantStatusFacts } from '../model/status-shape.ts';
import type { CachedObject } from '../kube/informer.ts';
import { writeStatus } from './apply-set.ts';
import type { ControllerContext } from './context.ts';

export function writeInstanceStatus(ctx: ControllerContext, live: CachedObject, desired: InstanceStatusFacts): Promise<boolean> {
  return writeStatus(ctx, live, instanceWireStatus(ctx.caches.inventory.level, desired, live.status));
}

export function writeTenantStatus(ctx: ControllerContext, live: CachedObject, desired: TenantStatusFacts): Promise<boolean> {
  return writeStatus(ctx, live, tenantWireStatus(ctx.caches.inventory.level, desired));
}
