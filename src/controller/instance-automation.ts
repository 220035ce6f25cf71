/**
 * Instance automation (docs/behaviour.md §8): termination by status-check URL, content submission, and Template
 * `deleteAfter` expiration, each its own key kind in the shared work queue so that each has its
 * own delayed re-add (a timer per key, no cron and no polling loop):
 * `InstanceTermination/ns/name`, `InstanceSubmission/ns/name`, `InstanceExpiration/ns/name`.
 *
 * Watch wiring (here): Instance changes (metadata/spec, not status) enqueue the enabled kinds and a
 * deleted Instance cancels its timers; Template changes re-plan expiration of their Instances;
 * Namespace label changes (whitelist, expiration-ignore) re-plan their Instances; a submitter Job
 * maps to its owner Instance's submission key.
 */
import { LABEL } from '../model/labels.ts';
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import { EXPIRATION_API_ACCESS, reconcileExpiration } from './reconcile-expiration.ts';
import { metadataOrSpecChanged } from './predicates.ts';
import { SUBMISSION_API_ACCESS, reconcileSubmission } from './reconcile-submission.ts';
import { TERMINATION_API_ACCESS, reconcileTermination } from './reconcile-termination.ts';
import type { ApiAccess } from '../kube/resources.ts';
import { AutomationState, type AutomationKind } from './automation-state.ts';

export { AUTOMATION_KINDS, type AutomationKind, type AutomationOptions } from './automation-state.ts';

/** Each automation (`--enable-instance-<name>`) and the API access it needs (the install's role). */
export const AUTOMATION_API_ACCESS: Readonly<Record<'termination' | 'submission' | 'expiration', readonly ApiAccess[]>> = {
  termination: TERMINATION_API_ACCESS,
  submission: SUBMISSION_API_ACCESS,
  expiration: EXPIRATION_API_ACCESS,
};

/** The automation with its dispatch to the three reconcilers (which see only its state). */
export class Automation extends AutomationState {
  reconcile(ctx: ControllerContext, kind: AutomationKind, namespace: string, name: string): Promise<ReconcileResult> {
    if (kind === 'InstanceTermination') return reconcileTermination(ctx, this, namespace, name);
    if (kind === 'InstanceSubmission') return reconcileSubmission(ctx, this, namespace, name);
    return reconcileExpiration(ctx, this, namespace, name);
  }
}

/** Declares what wakes the automation keys (see the module comment). */
export function watchAutomation(caches: Caches, automation: Automation, enqueue: (key: string) => void, cancel: (key: string) => void): void {
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
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    for (const k of keys(obj)) enqueue(k);
  });
  if (automation.handles('InstanceExpiration')) {
    caches.templates.on((type, obj, old) => {
      if (type === 'update' && old && JSON.stringify((old.spec as { deleteAfter?: string })?.deleteAfter) === JSON.stringify((obj.spec as { deleteAfter?: string })?.deleteAfter)) return;
      for (const inst of caches.instances.byIndex('template', `${obj.metadata.namespace}/${obj.metadata.name}`)) enqueue(`InstanceExpiration/${inst.metadata.namespace}/${inst.metadata.name}`);
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
