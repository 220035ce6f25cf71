/*
 * What the automation reconcilers (termination, submission, expiration) share besides the controller
 * context: options and memory. Apart from their registrations in instance-automation.ts, so that the
 * reconcilers and the registrations do not import each other.
 */
import type { ControllerContext } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { InactivityFlags } from '../model/inactivity.ts';
import type { PrometheusActivity } from '../integrations/prometheus/activity.ts';
import type { Mailer } from '../integrations/mail/mailer.ts';

/** `--enable-instance-inactive-termination` and what it reads (docs/behaviour.md §8.4). */
export interface InactivityOptions {
  flags: InactivityFlags;
  prometheus: PrometheusActivity;
  /** Absent: no mail is sent, whatever `flags.notifications` says. */
  mailer?: Mailer;
  /** The requeue jitter, in [0, 1). */
  random?: () => number;
}

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
  inactivity?: InactivityOptions;
}

export const AUTOMATION_KINDS = ['InstanceTermination', 'InstanceSubmission', 'InstanceExpiration', 'InstanceInactivity'] as const;
export type AutomationKind = (typeof AUTOMATION_KINDS)[number];

/** What the automation reconcilers share besides the controller context: options and memory. */
export class AutomationState {
  readonly statusCheckTimeoutMs: number;
  readonly statusCheckIntervalMs: number;
  readonly expirationDryRun: boolean;
  readonly kinds: AutomationKind[];
  readonly inactivity?: Required<Pick<InactivityOptions, 'random'>> & InactivityOptions;
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
      ...(options.inactivity ? (['InstanceInactivity'] as const) : []),
    ];
    if (options.inactivity) this.inactivity = { random: Math.random, ...options.inactivity };
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
}
