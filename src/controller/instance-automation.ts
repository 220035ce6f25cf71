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
import { metadataOrSpecChanged } from './reconcile-instance.ts';
import { SUBMISSION_API_ACCESS, reconcileSubmission } from './reconcile-submission.ts';
import { TERMINATION_API_ACCESS, reconcileTermination } from './reconcile-termination.ts';
import type { ApiAccess } from '../kube/resources.ts';

export interface AutomationOptions {
  /** `--enable-instance-termination` (default off). */
  termination?: boolean;
  /** `--enable-instance-submission` (default off). */
  submission?: boolean;
  /** `--enable-instance-expiration` (default off). */
  expiration?: boolean;
  /** `--instance-termination-status-check-timeout`, default 3 s. */
  statusCheckTimeoutMs?: number;
  /** `--instance-termination-status-check-interval`, default 2 min. */
  statusCheckIntervalMs?: number;
  /** `--expiration-dry-run`: expired Instances are deleted as a server-side dry run only. */
  expirationDryRun?: boolean;
}

/** Each automation (`--enable-instance-<name>`) and the API access it needs (the install's role). */
export const AUTOMATION_API_ACCESS: Readonly<Record<'termination' | 'submission' | 'expiration', readonly ApiAccess[]>> = {
  termination: TERMINATION_API_ACCESS,
  submission: SUBMISSION_API_ACCESS,
  expiration: EXPIRATION_API_ACCESS,
};

export const AUTOMATION_KINDS = ['InstanceTermination', 'InstanceSubmission', 'InstanceExpiration'] as const;
export type AutomationKind = (typeof AUTOMATION_KINDS)[number];

/** What the automation reconcilers share besides the controller context: options and memory. */
export class Automation {
  readonly statusCheckTimeoutMs: number;
  readonly statusCheckIntervalMs: number;
  readonly expirationDryRun: boolean;
  readonly kinds: AutomationKind[];
  /** Instances (by UID) whose status check answered 404 and whose termination is still to write. */
  readonly terminationDue = new Set<string>();
  /** When each Instance (by UID) was last checked by this process, ahead of the watch. */
  readonly lastCheck = new Map<string, number>();
  /** UIDs already reported by a dry-run expiration (one Event per Instance, not one per resync). */
  readonly dryRunReported = new Set<string>();
  /** The last Warning recorded per key: the same failure retried is not re-recorded. */
  private readonly lastWarning = new Map<string, string>();

  constructor(options: AutomationOptions) {
    this.statusCheckTimeoutMs = options.statusCheckTimeoutMs ?? 3_000;
    this.statusCheckIntervalMs = options.statusCheckIntervalMs ?? 120_000;
    this.expirationDryRun = options.expirationDryRun ?? false;
    this.kinds = [
      ...(options.termination ? (['InstanceTermination'] as const) : []),
      ...(options.submission ? (['InstanceSubmission'] as const) : []),
      ...(options.expiration ? (['InstanceExpiration'] as const) : []),
    ];
  }

  get enabled(): boolean {
    return this.kinds.length > 0;
  }

  handles(kind: string): kind is AutomationKind {
    return (this.kinds as string[]).includes(kind);
  }

  keysOf(namespace: string, name: string): string[] {
    return this.kinds.map((k) => `${k}/${namespace}/${name}`);
  }

  /** Records a Warning Event and logs it, once per key and message while the failure lasts. */
  async warn(ctx: ControllerContext, key: string, obj: CachedObject, reason: string, message: string): Promise<void> {
    if (this.lastWarning.get(key) === `${reason}: ${message}`) return;
    this.lastWarning.set(key, `${reason}: ${message}`);
    ctx.log.warn({ key, reason }, message);
    await ctx.events.record(obj, 'Warning', reason, message);
  }

  forgetInstance(uid: string): void {
    this.terminationDue.delete(uid);
    this.lastCheck.delete(uid);
    this.dryRunReported.delete(uid);
  }

  cleared(key: string): void {
    this.lastWarning.delete(key);
  }

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
