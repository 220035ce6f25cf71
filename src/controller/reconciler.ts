/**
 * One controller per parent kind, registered once: the work queue's key names the kind, and the
 * registry finds what reconciles it, what requeues it periodically, what enqueues it on a watch
 * event and which keys a full resync enqueues. controller.ts holds no per-kind code.
 */
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import { isTerminal } from './terminal-error.ts';

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

/**
 * What the work queue runs for a key: its kind's reconciler (an unknown kind: nothing to do), the
 * metrics and, after a success, the earlier of the result's and the kind's periodic requeue.
 */
export function dispatcher(
  registry: ReconcilerRegistry,
  ctx: ControllerContext,
  hooks: { onReconcile?: (key: string, outcome: 'success' | 'error', statusOnly: boolean) => void; queueDepth: () => number },
): (key: string, light: boolean) => Promise<ReconcileResult> {
  const { metrics } = ctx;
  return async (key, light) => {
    const req = parseKey(key, light);
    const { kind } = req;
    const reconciler = registry.get(kind);
    const t0 = performance.now();
    const statusOnly = reconciler?.statusOnly?.(req) ?? false;
    try {
      const result = reconciler ? await reconciler.reconcile(ctx, req) : {};
      metrics.reconciles.inc({ kind, result: 'success' });
      if (statusOnly) metrics.statusOnlyReconciles.inc();
      hooks.onReconcile?.(key, 'success', statusOnly);
      // A parent that still exists is reconciled again on its own (jittered: no lockstep).
      const periodic = reconciler?.periodic?.(ctx.caches, req);
      if (periodic !== undefined) return { requeueAfterMs: Math.min(result.requeueAfterMs ?? Infinity, periodic) };
      return result;
    } catch (e) {
      metrics.reconciles.inc({ kind, result: 'error' });
      hooks.onReconcile?.(key, 'error', statusOnly);
      metrics.errors.inc({ kind, reason: isTerminal(e) ? 'terminal' : 'reconcile' });
      // Not retried: the Event is where users see why (once per failure, as the key runs once).
      if (isTerminal(e) && e.event) await ctx.events.record(e.event.object, 'Warning', e.event.reason, e.message.slice(0, 1000)).catch(() => {});
      throw e;
    } finally {
      metrics.latency.observe({ kind }, (performance.now() - t0) / 1000);
      metrics.queueDepth.set(hooks.queueDepth());
    }
  };
}
