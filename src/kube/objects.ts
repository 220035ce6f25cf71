/**
 * The object verbs every user of the API client needs — get (404 → undefined), list, delete and
 * server-side apply — over `KubeClient.request`, so no feature writes its own small client.
 */
import type { KubeObject } from '../inputs/types.ts';
import { FIELD_MANAGER, isNotFound, type KubeClient } from './client.ts';

export { FIELD_MANAGER };

/** Server-side apply of one object (field manager `crownlabs-composer`, force); the server's answer. */
export async function serverSideApply(client: KubeClient, obj: KubeObject, opts: { dryRun?: boolean } = {}): Promise<Record<string, unknown>> {
  return client.request('PATCH', client.path(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name), {
    query: { fieldManager: FIELD_MANAGER, force: true, dryRun: opts.dryRun ? 'All' : undefined },
    body: obj,
    contentType: 'application/apply-patch+yaml',
  });
}

/** The live object, or undefined when there is none. */
export async function getObject<T = KubeObject>(client: KubeClient, apiVersion: string, kind: string, namespace: string | undefined, name: string): Promise<T | undefined> {
  try {
    return await client.request<T>('GET', client.path(apiVersion, kind, namespace, name));
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** One list call (no paging): the items matching the selectors. */
export async function listObjects<T = KubeObject>(
  client: KubeClient,
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  selectors: { labelSelector?: string; fieldSelector?: string } = {},
): Promise<T[]> {
  const res = await client.request<{ items: T[] }>('GET', client.path(apiVersion, kind, namespace), { query: { ...selectors } });
  return res.items;
}

/**
 * Deletes an object in the background; with `uid`, only that instance (a namesake made since
 * answers 409). True when it was deleted, false when it was already gone.
 */
export async function deleteObject(client: KubeClient, apiVersion: string, kind: string, namespace: string | undefined, name: string, uid?: string): Promise<boolean> {
  try {
    await client.request('DELETE', client.path(apiVersion, kind, namespace, name), {
      query: { propagationPolicy: 'Background' },
      body: uid ? { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid } } : undefined,
    });
    return true;
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}
