import { compose, type ComposeOptions, type Composition } from '../compose/compose.ts';
import type { ComposerConfig } from '../config/config.ts';
import type { Inventory } from '../inputs/inventory.ts';
import type { ParentRef } from '../model/labels.ts';
import type { RenderCache } from './render-cache.ts';

/** A set taken from the render cache without composing it (RenderCache.reuse). */
export interface ReusedSet<V> {
  id: string;
  parent: ParentRef;
  entry: V;
}

/**
 * compose(), less the sets `cache` gives without composing them (RenderCache.reuse): those come
 * back in `reused`. Without a cache, compose() itself.
 */
export function composeReusing<V>(inventory: Inventory, config: ComposerConfig, cache: RenderCache<V> | undefined, options: ComposeOptions = {}): { composition: Composition; reused: ReusedSet<V>[] } {
  const reused: ReusedSet<V>[] = [];
  if (!cache) return { composition: compose(inventory, config, options), reused };
  const only = (parent: ParentRef) => {
    const hit = cache.reuse(parent);
    if (hit) reused.push({ id: hit.id, parent, entry: hit.value });
    return !hit;
  };
  return { composition: compose(inventory, config, { ...options, only }), reused };
}
