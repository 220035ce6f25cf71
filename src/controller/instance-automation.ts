/**
 * Instance automation (docs/behaviour.md §8): termination by status-check URL, content submission, Template
 * `deleteAfter` expiration and inactivity, each its own key kind in the shared work queue so that
 * each has its own delayed re-add (a timer per key, no cron and no polling loop):
 * `InstanceTermination/ns/name`, `InstanceSubmission/ns/name`, `InstanceExpiration/ns/name`,
 * `InstanceInactivity/ns/name`.
 *
 * Registration (`automationReconcilers`) and watch wiring (here): Instance changes (metadata/spec, not status,
 * not the inactivity bookkeeping) enqueue the enabled kinds and a deleted Instance cancels its
 * timers; Template timeout changes re-plan expiration and inactivity of their Instances;
 * Namespace label changes (whitelist, the ignore labels) re-plan their Instances; a submitter Job
 * maps to its owner Instance's submission key.
 */
import { LABEL } from '../model/labels.ts';
import { CUSTOM_ALERTS_ANNOTATION } from '../model/inactivity.ts';
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import { EXPIRATION_API_ACCESS, reconcileExpiration } from './reconcile-expiration.ts';
import { INACTIVITY_API_ACCESS, reconcileInactivity } from './reconcile-inactivity.ts';
import { instanceChanged } from './predicates.ts';
import { SUBMISSION_API_ACCESS, reconcileSubmission } from './reconcile-submission.ts';
import { TERMINATION_API_ACCESS, reconcileTermination } from './reconcile-termination.ts';
import type { ApiAccess } from '../kube/resources.ts';
import type { AutomationState, AutomationKind } from './automation-state.ts';
import type { Reconciler } from './reconciler.ts';

export { AUTOMATION_KINDS, AutomationState, type AutomationKind, type AutomationOptions } from './automation-state.ts';

/** Each automation (`--enable-instance-<name>`) and the API access it needs (the install's role). */
export const AUTOMATION_API_ACCESS: Readonly<Record<'termination' | 'submission' | 'expiration' | 'inactive-termination', readonly ApiAccess[]>> = {
  termination: TERMINATION_API_ACCESS,
  submission: SUBMISSION_API_ACCESS,
  expiration: EXPIRATION_API_ACCESS,
  'inactive-termination': INACTIVITY_API_ACCESS,
};

const RECONCILE = {
  InstanceTermination: reconcileTermination,
  InstanceSubmission: reconcileSubmission,
  InstanceExpiration: reconcileExpiration,
  InstanceInactivity: reconcileInactivity,
} satisfies Record<AutomationKind, (ctx: ControllerContext, auto: AutomationState, namespace: string, name: string) => Promise<ReconcileResult>>;

/** One registration per enabled automation kind; the reconcilers see only the shared state. */
export function automationReconcilers(auto: AutomationState): Reconciler[] {
  return auto.kinds.map((kind, i) => ({
    kind,
    reconcile: (ctx, req) => RECONCILE[kind](ctx, auto, req.namespace, req.name),
    // The kinds share one watch wiring (below), so it is wired once, with the first.
    watches: i === 0 ? (w) => watchAutomation(w.caches, auto, w.enqueue, w.cancel) : undefined,
    keys: (caches) => caches.instances.list().map((o) => `${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`),
  }));
}

/** Declares what wakes the automation keys (see the module comment). */
export function watchAutomation(caches: Caches, automation: AutomationState, enqueue: (key: string) => void, cancel: (key: string) => void): void {
  if (!automation.enabled) return;
  const keys = (o: CachedObject) => automation.keysOf(o.metadata.namespace ?? '', o.metadata.name);
  caches.instances.on((type, obj, old) => {
    if (type === 'delete') {
      for (const k of keys(obj)) {
        cancel(k);
        automation.cleared(k);
      }
      automation.forgetInstance(obj.metadata.uid ?? '');
      return;
    }
    if (type === 'update' && old && !instanceChanged(obj, old)) return;
    for (const k of keys(obj)) enqueue(k);
  });
  // A Template's timeouts (and alert count) re-plan its Instances' expiration and inactivity.
  const timeoutKinds = automation.kinds.filter((k) => k === 'InstanceExpiration' || k === 'InstanceInactivity');
  if (timeoutKinds.length) {
    const timeouts = (o: CachedObject) => JSON.stringify([(o.spec as { deleteAfter?: string })?.deleteAfter, (o.spec as { cleanup?: unknown })?.cleanup, o.metadata.annotations?.[CUSTOM_ALERTS_ANNOTATION]]);
    caches.templates.on((type, obj, old) => {
      if (type === 'update' && old && timeouts(old) === timeouts(obj)) return;
      for (const inst of caches.instances.byIndex('template', `${obj.metadata.namespace}/${obj.metadata.name}`)) for (const k of timeoutKinds) enqueue(`${k}/${inst.metadata.namespace}/${inst.metadata.name}`);
    });
  }
  caches.namespaces.on((type, obj, old) => {
    if (type === 'update' && old && JSON.stringify(old.metadata.labels) === JSON.stringify(obj.metadata.labels)) return;
    for (const inst of caches.instances.byIndex('namespace', obj.metadata.name)) for (const k of keys(inst)) enqueue(k);
  });
  if (automation.handles('InstanceSubmission')) {
    caches.child('batch/v1', 'Job')?.on((_type, obj, old) => {
      if (old && old.metadata.resourceVersion === obj.metadata.resourceVersion) return;
      if (obj.metadata.labels?.[LABEL.component] !== 'submitter') return;
      const owner = (obj.metadata.ownerReferences ?? []).find((r) => r.controller && r.kind === 'Instance');
      if (owner) enqueue(`InstanceSubmission/${obj.metadata.namespace}/${owner.name}`);
    });
  }
}
