/* A rendered child as the controller sees it before acting on it. */
import type { CachedObject } from '../kube/informer.ts';
import { isNotFound } from '../kube/client.ts';
import type { ControllerContext } from './context.ts';

/**
 * The live object: from the cache of its kind, else from the server, since one not labelled by us
 * (another operator's, or one made by hand) is not cached. Undefined when neither has it.
 */
export async function liveOrServer(ctx: ControllerContext, obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<CachedObject | undefined> {
  const cached = ctx.caches.liveOf(obj);
  if (cached) return cached;
  try {
    return await ctx.client.request<CachedObject>('GET', ctx.client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}
