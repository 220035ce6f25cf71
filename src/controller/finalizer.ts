/** The tenant-operator finalizer on Tenants and Workspaces (docs/behaviour.md §0.7). */
import { TENANT_FINALIZER, type ControllerContext } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';

export async function setFinalizer(ctx: ControllerContext, obj: CachedObject, present: boolean): Promise<void> {
  const current = obj.metadata.finalizers ?? [];
  if (current.includes(TENANT_FINALIZER) === present) return;
  const finalizers = present ? [...current, TENANT_FINALIZER] : current.filter((f) => f !== TENANT_FINALIZER);
  await ctx.client.request('PATCH', ctx.client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), {
    body: { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } },
    contentType: 'application/merge-patch+json',
  });
}
