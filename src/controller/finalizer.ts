/** A parent's finalizer: by default the tenant-operator's on Tenants and Workspaces (docs/behaviour.md §0.7). */
import type { ControllerContext } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import { finalizerPatch } from './parent-patches.ts';

export async function setFinalizer(ctx: ControllerContext, obj: CachedObject, present: boolean, finalizer?: string): Promise<void> {
  const patch = finalizerPatch(obj, present, finalizer);
  if (!patch) return;
  await ctx.client.request('PATCH', ctx.client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), {
    body: patch,
    contentType: 'application/merge-patch+json',
  });
}
