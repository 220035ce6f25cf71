/* The controller's fan-out of input changes: the parents whose last reconcile looked the changed keys up. */
import { lookupKeysOf } from '../compose/dependency-index.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { Caches } from './caches.ts';

/**
 * Enqueues the parents of `parentKind` that depend on any key the change of an input object
 * concerns: its own key and its reverse-lookup keys, as it was and as it is (a Tenant that stops
 * managing a workspace concerns that workspace's Instances too).
 */
export function enqueueDependents(caches: Caches, inputKind: string, obj: CachedObject, old: CachedObject | undefined, parentKind: string, enqueue: (key: string) => void): void {
  const keys = lookupKeysOf(inputKind, obj);
  if (old) keys.push(...lookupKeysOf(inputKind, old));
  const prefix = `${parentKind}/`;
  for (const dependent of caches.dependencies.dependentsOf(keys)) if (dependent.startsWith(prefix)) enqueue(dependent);
}
