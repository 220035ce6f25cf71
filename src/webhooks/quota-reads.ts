/** The Instance quota webhook's reads through the API server (./instance-quota.ts): never a cache, since a stale list lets a race through. */
import type { Instance, Template, Tenant, Workspace } from '../inputs/types.ts';
import { isNotFound, type KubeClient } from '../kube/client.ts';
import type { QuotaReads } from './instance-quota.ts';

export function apiServerQuotaReads(client: KubeClient): QuotaReads {
  const get = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await client.request<T>('GET', path);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  };
  // A list without resourceVersion is read from etcd (a quorum read), not from the watch cache.
  const list = async <T>(path: string): Promise<T[]> => (await client.request<{ items: T[] }>('GET', path)).items;
  return {
    getTemplate: (ns, name) => get<Template>(client.path('crownlabs.polito.it/v1alpha2', 'Template', ns, name)),
    listTemplates: (ns) => list<Template>(client.path('crownlabs.polito.it/v1alpha2', 'Template', ns)),
    listInstances: (ns) => list<Instance>(client.path('crownlabs.polito.it/v1alpha2', 'Instance', ns)),
    getWorkspace: (name) => get<Workspace>(client.path('crownlabs.polito.it/v1alpha1', 'Workspace', undefined, name)),
    getTenant: (name) => get<Tenant>(client.path('crownlabs.polito.it/v1alpha2', 'Tenant', undefined, name)),
  };
}
