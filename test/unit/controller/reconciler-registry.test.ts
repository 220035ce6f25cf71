// The reconciler registry (#18): one registration per kind dispatches each work-queue key, and a
// TerminalError (an object that failed validation) is not retried, while a plain error backs off.
import { describe, expect, it } from 'vitest';
import { DependencyIndex } from '../../../src/compose/dependency-index.ts';
import type { ControllerContext } from '../../../src/controller/context.ts';
import { AutomationState } from '../../../src/controller/automation-state.ts';
import { ControllerMetrics } from '../../../src/controller/metrics.ts';
import { dispatcher, parseKey, ReconcilerRegistry, type Reconciler, type ReconcileRequest } from '../../../src/controller/reconciler.ts';
import { controllerReconcilers } from '../../../src/controller/reconcilers.ts';
import { TerminalError } from '../../../src/controller/terminal-error.ts';
import { WorkQueue } from '../../../src/controller/work-queue.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const PERIODIC = { resyncPeriodMs: 0, requeueMinMs: 0, requeueMaxMs: 0 };

/** Runs `process` on a queue with a 10 ms base back-off; returns the run count per key after `ms`. */
async function runFor(ms: number, keys: string[], process: (key: string) => Promise<void>) {
  const q = new WorkQueue({ workers: 1, baseDelayMs: 10, maxDelayMs: 10, random: () => 0 });
  const runs = new Map<string, number>();
  const errors: string[] = [];
  q.run(
    async (key) => {
      runs.set(key, (runs.get(key) ?? 0) + 1);
      await process(key);
    },
    (key) => errors.push(key),
  );
  for (const k of keys) q.add(k);
  await sleep(ms);
  return { q, runs, errors };
}

describe('work queue and TerminalError', () => {
  it('does not retry a key that threw a TerminalError, and retries a plain Error with back-off', async () => {
    const { q, runs, errors } = await runFor(150, ['terminal', 'plain'], async (key) => {
      throw key === 'terminal' ? new TerminalError('failed validation') : new Error('connection refused');
    });
    expect(runs.get('terminal')).toBe(1);
    expect(q.hasDelayed('terminal')).toBe(false);
    expect(runs.get('plain')).toBeGreaterThan(3);
    expect(errors.filter((k) => k === 'terminal')).toHaveLength(1);
    await q.stop();
  });
  it('a later add (a watch event) runs a terminal key again', async () => {
    let fail = true;
    const { q, runs } = await runFor(40, ['k'], async () => {
      if (fail) throw new TerminalError('failed validation');
    });
    expect(runs.get('k')).toBe(1);
    fail = false;
    q.add('k');
    await sleep(20);
    await q.idle();
    expect(runs.get('k')).toBe(2);
    await q.stop();
  });
});

describe('reconciler registry', () => {
  it('registers every parent kind and the enabled automation kinds, once each', () => {
    const all = new AutomationState({ termination: true, submission: true, expiration: true });
    expect(new ReconcilerRegistry(controllerReconcilers(PERIODIC, all)).all.map((r) => r.kind)).toEqual([
      'Instance',
      'InstanceTermination',
      'InstanceSubmission',
      'InstanceExpiration',
      'Tenant',
      'Workspace',
      'InstanceSnapshot',
      'SharedVolume',
    ]);
    expect(controllerReconcilers(PERIODIC, new AutomationState({ expiration: true })).map((r) => r.kind)).toEqual(['Instance', 'InstanceExpiration', 'Tenant', 'Workspace', 'InstanceSnapshot', 'SharedVolume']);
    const fake: Reconciler = { kind: 'Tenant', reconcile: async () => ({}), keys: () => [] };
    expect(() => new ReconcilerRegistry([fake, fake])).toThrow('two reconcilers registered for Tenant');
  });
  it('splits keys of cluster-scoped and namespaced kinds', () => {
    expect(parseKey('Tenant/alice')).toEqual({ key: 'Tenant/alice', kind: 'Tenant', namespace: '', name: 'alice', light: false });
    expect(parseKey('InstanceExpiration/ns/vm', true)).toEqual({ key: 'InstanceExpiration/ns/vm', kind: 'InstanceExpiration', namespace: 'ns', name: 'vm', light: true });
  });
  it('dispatches each key to its kind, applies its periodic requeue, and ignores unknown kinds', async () => {
    const kinds = ['Instance', 'InstanceTermination', 'InstanceSubmission', 'InstanceExpiration', 'Tenant', 'Workspace', 'InstanceSnapshot'];
    const seen: ReconcileRequest[] = [];
    const registry = new ReconcilerRegistry(
      kinds.map((kind) => ({ kind, reconcile: async (_ctx, req) => (seen.push(req), { requeueAfterMs: 500 }), periodic: kind === 'Tenant' ? () => 100 : undefined, keys: () => [] })),
    );
    const ctx = { metrics: new ControllerMetrics(), caches: {} } as unknown as ControllerContext;
    const run = dispatcher(registry, ctx, { queueDepth: () => 0 });
    const results = [];
    for (const kind of kinds) results.push(await run(kind === 'Tenant' || kind === 'Workspace' ? `${kind}/x` : `${kind}/ns/x`, false));
    expect(seen.map((r) => r.kind)).toEqual(kinds);
    expect(results.map((r) => r.requeueAfterMs)).toEqual([500, 500, 500, 500, 100, 500, 500]);
    expect(await run('Unknown/x', false)).toEqual({});
  });
});

describe('controller dispatch of an object that failed validation', () => {
  it('reconciles the key once, counts an error, records one Warning Event naming the problems, and does not retry it', async () => {
    const live: CachedObject = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'vm', namespace: 'tenant-a' }, spec: {} };
    // Live in the cache but not in the Inventory: it failed validation.
    const caches = { instances: { get: () => live }, inventory: { instances: new Map() }, dependencies: new DependencyIndex(), whyInvalid: () => 'spec.environmentList: required value is missing' };
    const metrics = new ControllerMetrics();
    const events: string[] = [];
    const record = async (obj: CachedObject, type: string, reason: string, message: string) => void events.push(`${obj.metadata.name} ${type} ${reason}: ${message}`);
    const ctx = { metrics, caches, events: { record } } as unknown as ControllerContext;
    const registry = new ReconcilerRegistry(controllerReconcilers(PERIODIC, new AutomationState({})));
    const outcomes: string[] = [];
    const q = new WorkQueue({ workers: 1, baseDelayMs: 5, maxDelayMs: 5 });
    const failures: string[] = [];
    q.run(dispatcher(registry, ctx, { onReconcile: (key, outcome) => outcomes.push(`${key} ${outcome}`), queueDepth: () => q.depth }), (_k, err) => failures.push((err as Error).message));
    q.add('Instance/tenant-a/vm');
    await sleep(100);
    expect(outcomes).toEqual(['Instance/tenant-a/vm error']);
    expect(failures).toEqual(['Instance tenant-a/vm failed validation: spec.environmentList: required value is missing']);
    expect(events).toEqual(['vm Warning InvalidObject: Instance tenant-a/vm failed validation: spec.environmentList: required value is missing']);
    expect(q.hasDelayed('Instance/tenant-a/vm')).toBe(false);
    const errors = (await metrics.errors.get()).values;
    expect(errors).toEqual([expect.objectContaining({ labels: { kind: 'Instance', reason: 'terminal' }, value: 1 })]);
    await q.stop();
  });
});
