/**
 * One controller per parent kind, registered once: the work queue's key names the kind, and the
 * registry finds what reconciles it, what requeues it periodically, what enqueues it on a watch
 * event and which keys a full resync enqueues. controller.ts holds no per-kind code.
 */
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';

/** A work-queue key, split: `Kind/name` (cluster-scoped) or `Kind/namespace/name`. */
export interface ReconcileRequest {
  key: string;
  kind: string;
  /** '' for cluster-scoped kinds. */
  namespace: string;
  name: string;
  /** Every add since the key's last run was light (work-queue.ts). */
  light: boolean;
}

/** What a reconciler's watches may call. */
export interface WatchWiring {
  ctx: ControllerContext;
  caches: Caches;
  enqueue(key: string): void;
  /** Cancels a key's pending delayed add (its object is gone). */
  cancel(key: string): void;
}

export interface Reconciler {
  readonly kind: string;
  /** Whether this run only derives the status again (counted apart in the metrics). */
  statusOnly?(req: ReconcileRequest): boolean;
  /** Throws a `TerminalError` for a failure a retry cannot fix, any other error to retry with back-off. */
  reconcile(ctx: ControllerContext, req: ReconcileRequest): Promise<ReconcileResult>;
  /** Wires the informer events that enqueue this kind's keys (called once, in registry order). */
  watches?(w: WatchWiring): void;
  /** When a parent that still exists is reconciled again on its own after a success (undefined: never). */
  periodic?(caches: Caches, req: ReconcileRequest): number | undefined;
  /** The keys a full resync enqueues. */
  keys(caches: Caches): Iterable<string>;
}

export function parseKey(key: string, light = false): ReconcileRequest {
  const [kind = '', a = '', b] = key.split('/');
  return b === undefined ? { key, kind, namespace: '', name: a, light } : { key, kind, namespace: a, name: b, light };
}

export class ReconcilerRegistry {
  private readonly byKind = new Map<string, Reconciler>();

  constructor(readonly all: readonly Reconciler[]) {
    for (const r of all) {
      if (this.byKind.has(r.kind)) throw new Error(`two reconcilers registered for ${r.kind}`);
      this.byKind.set(r.kind, r);
    }
  }

  get(kind: string): Reconciler | undefined {
    return this.byKind.get(kind);
  }

  watch(w: WatchWiring): void {
    for (const r of this.all) r.watches?.(w);
  }

  /** Every key of every registered kind (a full resync). */
  *keys(caches: Caches): Iterable<string> {
    for (const r of this.all) yield* r.keys(caches);
  }
}
