/*
 * Predicates the reconcilers share: which watch events matter, and which namespaces are ours.
 */
import type { ControllerContext } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import { isInactivityAnnotation } from '../model/inactivity.ts';

/** docs/behaviour.md §0.6: the namespace carries every label of `--namespace-whitelist` (from the cache). */
export function whitelisted(ctx: ControllerContext, namespace: string): boolean {
  const wl = ctx.config.namespaceWhitelist;
  if (Object.keys(wl).length === 0) return true;
  const ns = ctx.caches.namespaces.get(undefined, namespace);
  return !!ns && Object.entries(wl).every(([k, v]) => ns.metadata.labels?.[k] === v);
}

/** A parent's update that matters: not one of our own status writes. */
export function metadataOrSpecChanged(obj: CachedObject, old: CachedObject): boolean {
  if (obj.metadata.generation !== old.metadata.generation) return true;
  const pick = (o: CachedObject) =>
    JSON.stringify([o.metadata.labels, o.metadata.annotations, o.metadata.finalizers, o.metadata.deletionTimestamp, o.metadata.generation === undefined ? o.spec : null]);
  return pick(obj) !== pick(old);
}

/**
 * An Instance's update that matters: as metadataOrSpecChanged, without the inactivity
 * automation's bookkeeping annotations, which nothing renders from and which that automation
 * writes on every Instance at each activity check (docs/behaviour.md §8.4).
 */
export function instanceChanged(obj: CachedObject, old: CachedObject): boolean {
  if (!metadataOrSpecChanged(obj, old)) return false;
  const strip = (o: CachedObject): CachedObject => {
    const annotations = Object.fromEntries(Object.entries(o.metadata.annotations ?? {}).filter(([k]) => !isInactivityAnnotation(k)));
    return { ...o, metadata: { ...o.metadata, annotations } };
  };
  return metadataOrSpecChanged(strip(obj), strip(old));
}
