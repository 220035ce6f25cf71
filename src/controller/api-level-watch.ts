/**
 * The API level the controller follows: read from the installed CrownLabs CRDs (`levelOfCrds`,
 * docs/behaviour.md §16.2) and watched, so that a CRD upgrade is noticed.
 */
import { LEVEL_MARKS, levelOfCrds, type CrdLike, type CrdsLevel } from '../inputs/api-level.ts';
import { Informer, type CachedObject } from '../kube/informer.ts';
import type { KubeClient } from '../kube/client.ts';
import type { ApiAccess } from '../kube/resources.ts';

/** What reading the CRDs needs, an informer's list and watch (src/platform/derive-rbac.ts adds it to the controller's ClusterRole). */
export const API_LEVEL_API_ACCESS: readonly ApiAccess[] = [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', verbs: ['list', 'watch'] }];

const MARKED = new Map(LEVEL_MARKS.map((m) => [m.crd, m.path]));

/**
 * What the cache keeps of a CRD: each version's name, storage flag and, of its schema, only the
 * mark's path where it exists (a CRD's schema runs to hundreds of kilobytes).
 */
export function crdProjection(crd: CachedObject): CachedObject {
  const path = MARKED.get(crd.metadata.name) ?? [];
  const versions = ((crd.spec as CrdLike['spec'])?.versions ?? []).map((v) => {
    let node = v.schema?.openAPIV3Schema as { properties?: Record<string, unknown> } | undefined;
    const kept: string[] = [];
    for (const key of path) {
      if (!node?.properties || !(key in node.properties)) break;
      kept.push(key);
      node = node.properties[key] as typeof node;
    }
    const schema = kept.reduceRight<Record<string, unknown>>((inner, key) => ({ properties: { [key]: inner } }), {});
    return { name: v.name, storage: v.storage, schema: { openAPIV3Schema: schema } };
  });
  const { name, uid, resourceVersion } = crd.metadata;
  return { apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name, uid, resourceVersion }, spec: { versions } };
}

/** An informer on the CRDs of `LEVEL_MARKS` only. */
export function crdInformer(client: KubeClient, onError: (err: Error) => void): Informer {
  return new Informer(client, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    transform: crdProjection,
    accept: (o) => MARKED.has(o.metadata.name),
    onError,
  });
}

/** The level the cached CRDs show. */
export function cachedLevel(inf: Informer): CrdsLevel {
  return levelOfCrds(inf.list() as unknown as CrdLike[]);
}

/** Whether two detections say the same (one log line per change, not per CRD event). */
export function sameDetection(a: CrdsLevel, b: CrdsLevel): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
