/**
 * Inactivity automation (docs/behaviour.md §8.4), pure: what one reconcile of an Instance does, given
 * its running state, the annotations it keeps, the activity measured now, the Template's `cleanup`
 * timeouts and the controller's flags. The clock and the requeue jitter are inputs.
 *
 * The state lives in the Instance's annotations, under upstream's names, so that a lab switching from
 * the Go operator carries its counts over.
 */
import type { Lifespan } from './automation.ts';
import { rfc3339 } from './automation.ts';

export const INACTIVITY_ANNOTATION = {
  alertsSent: 'crownlabs.polito.it/number-alerts-sent',
  lastActivity: 'crownlabs.polito.it/last-activity',
  lastActivityCheck: 'crownlabs.polito.it/last-activity-check-timestamp',
  lastNotification: 'crownlabs.polito.it/last-notification-timestamp',
  lastRunning: 'crownlabs.polito.it/last-running',
  lastPoweredOff: 'crownlabs.polito.it/last-powered-off-timestamp',
  destructionAlertsSent: 'crownlabs.polito.it/destruction-alerts-sent',
  lastDestructionNotification: 'crownlabs.polito.it/last-destruction-notification-timestamp',
} as const;

const OWN = new Set<string>(Object.values(INACTIVITY_ANNOTATION));
/** Whether an Instance annotation is this automation's bookkeeping. */
export function isInactivityAnnotation(key: string): boolean {
  return OWN.has(key);
}

/** A Template annotation: its Instances' number of inactivity warnings, instead of the flag's. */
export const CUSTOM_ALERTS_ANNOTATION = 'crownlabs.polito.it/custom-number-alerts';
/** Namespaces carrying this label `true` are left out of inactivity stops and deletions. */
export const INACTIVITY_IGNORE_LABEL = 'crownlabs.polito.it/instance-inactivity-ignore';

export interface InactivityFlags {
  maxAlerts: number;
  notifications: boolean;
  notificationIntervalMs: number;
  destructionNotificationIntervalMs: number;
  marginMs: number;
  minRequeueMs: number;
  maxRequeueMs: number;
  checkThresholdMs: number;
}

export interface InactivityPolicy {
  stopAfter: Lifespan;
  deleteAfter: Lifespan;
  /** The Template's custom count, else the flag's. */
  maxAlerts: number;
}

export interface InactivityFacts {
  running: boolean;
  /** Any environment of the Template is persistent: a stop pauses it, else it is deleted. */
  persistent: boolean;
  annotations: Readonly<Record<string, string>>;
  namespaceIgnored: boolean;
  now: number;
  /** In [0, 1): where in [min, max) the periodic refresh falls, so that Instances do not query together. */
  jitter: number;
}

/** The latest access Prometheus shows (epoch ms), `none` when it shows none in its window. */
export type MeasuredActivity = { at: number } | 'none';

export type InactivityStep =
  | { kind: 'none' }
  | { kind: 'warn'; mail: 'inactivity-warning'; remainingMs: number }
  | { kind: 'stop'; mail: 'inactivity-stopped' }
  | { kind: 'delete'; mail: 'inactivity-stopped' }
  | { kind: 'warn-destruction'; mail: 'destruction-warning'; remainingMs: number }
  | { kind: 'destroy'; mail: 'destruction' };

export interface InactivityPlan {
  /** The annotations to write (`null` deletes one), before the step's mail is sent. */
  annotations: Record<string, string | null>;
  /** `stop`: also `spec.running = false`. */
  step: InactivityStep;
  requeueAfterMs?: number;
}

const A = INACTIVITY_ANNOTATION;

/** The number a count annotation holds; anything else is 0 (a hand-edited value does not block the automation). */
function count(value: string | undefined): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

function time(value: string | undefined): number | undefined {
  if (!value) return undefined;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : undefined;
}

/** Whether Prometheus is asked for this Instance's activity now: it runs, and its last check is older than the threshold. */
export function activityCheckDue(facts: Pick<InactivityFacts, 'running' | 'annotations' | 'now'>, flags: Pick<InactivityFlags, 'checkThresholdMs'>): boolean {
  if (!facts.running) return false;
  const last = time(facts.annotations[A.lastActivityCheck]);
  return last === undefined || facts.now - last >= flags.checkThresholdMs;
}

/**
 * One reconcile. `measured` is what Prometheus answered when the check was due, undefined when it
 * was not; the caller does not plan at all when Prometheus could not answer, so that nothing is stopped
 * or deleted on activity it could not see.
 */
export function planInactivity(facts: InactivityFacts, policy: InactivityPolicy, flags: InactivityFlags, measured: MeasuredActivity | undefined): InactivityPlan {
  const ann = { ...facts.annotations };
  const out: Record<string, string | null> = {};
  const set = (k: string, v: string | null) => {
    if ((v === null && !(k in ann)) || ann[k] === v) return;
    out[k] = v;
    if (v === null) delete ann[k];
    else ann[k] = v;
  };
  const now = rfc3339(facts.now);

  // A paused Instance started again begins a new count, from now.
  const wasRunning = ann[A.lastRunning] === 'true';
  if (facts.running && !wasRunning) {
    set(A.alertsSent, '0');
    set(A.lastActivity, now);
    set(A.destructionAlertsSent, '0');
    set(A.lastDestructionNotification, '');
  }
  set(A.lastRunning, String(facts.running));
  if (!(A.alertsSent in ann)) set(A.alertsSent, '0');
  // Missing or not a time (hand-edited): counted from now, else it could never run out.
  if (time(ann[A.lastActivity]) === undefined) set(A.lastActivity, now);
  if (facts.running) set(A.lastPoweredOff, null);
  else if (!time(ann[A.lastPoweredOff])) set(A.lastPoweredOff, now);

  if (!facts.running) return { annotations: out, ...poweredOff(facts, policy, flags, ann, set) };

  if (measured !== undefined) {
    if (measured !== 'none') {
      const at = rfc3339(measured.at);
      // Newer activity restarts the count; an older sample (a restart reset the annotation) does not move it back.
      if (ann[A.lastActivity] !== at && measured.at > (time(ann[A.lastActivity]) ?? 0)) {
        set(A.lastActivity, at);
        set(A.alertsSent, '0');
      }
    }
    set(A.lastActivityCheck, now);
  }

  const refresh = flags.minRequeueMs + Math.floor(facts.jitter * Math.max(0, flags.maxRequeueMs - flags.minRequeueMs));
  if (facts.namespaceIgnored || policy.stopAfter.never) return { annotations: out, step: { kind: 'none' }, requeueAfterMs: refresh };

  const lastActivity = time(ann[A.lastActivity]) ?? facts.now;
  const remaining = lastActivity + policy.stopAfter.ms - facts.now;
  if (remaining > 0) return { annotations: out, step: { kind: 'none' }, requeueAfterMs: Math.min(refresh, remaining + flags.marginMs) };

  const act: InactivityStep = facts.persistent ? { kind: 'stop', mail: 'inactivity-stopped' } : { kind: 'delete', mail: 'inactivity-stopped' };
  const stop = (): InactivityPlan => {
    if (facts.persistent) {
      set(A.lastRunning, 'false');
      set(A.lastPoweredOff, now);
    }
    return { annotations: out, step: act };
  };
  if (!flags.notifications) return stop();

  const sent = count(ann[A.alertsSent]);
  const last = time(ann[A.lastNotification]);
  // The margin absorbs requeue delays: a reconcile a little early still takes the step.
  const nextAt = sent > 0 && last !== undefined ? last + flags.notificationIntervalMs - flags.marginMs : facts.now;
  if (nextAt > facts.now) return { annotations: out, step: { kind: 'none' }, requeueAfterMs: nextAt - facts.now + flags.marginMs };
  if (sent < policy.maxAlerts) {
    set(A.alertsSent, String(sent + 1));
    set(A.lastNotification, now);
    return { annotations: out, step: { kind: 'warn', mail: 'inactivity-warning', remainingMs: (policy.maxAlerts - sent) * flags.notificationIntervalMs }, requeueAfterMs: flags.notificationIntervalMs };
  }
  // Warned as many times as it should be, the last warning an interval ago.
  return stop();
}

function poweredOff(
  facts: InactivityFacts,
  policy: InactivityPolicy,
  flags: InactivityFlags,
  ann: Record<string, string>,
  set: (k: string, v: string | null) => void,
): Omit<InactivityPlan, 'annotations'> {
  if (facts.namespaceIgnored || policy.deleteAfter.never) return { step: { kind: 'none' } };
  const since = time(ann[A.lastPoweredOff]) ?? facts.now;
  const remaining = since + policy.deleteAfter.ms - facts.now;
  if (remaining > 0) return { step: { kind: 'none' }, requeueAfterMs: remaining + flags.marginMs };
  if (!flags.notifications) return { step: { kind: 'destroy', mail: 'destruction' } };
  const sent = count(ann[A.destructionAlertsSent]);
  const last = time(ann[A.lastDestructionNotification]);
  const nextAt = sent > 0 && last !== undefined ? last + flags.destructionNotificationIntervalMs - flags.marginMs : facts.now;
  if (nextAt > facts.now) return { step: { kind: 'none' }, requeueAfterMs: nextAt - facts.now + flags.marginMs };
  // As upstream, the destruction warnings count up to the flag's number, not the Template's.
  if (sent < flags.maxAlerts) {
    set(A.destructionAlertsSent, String(sent + 1));
    set(A.lastDestructionNotification, rfc3339(facts.now));
    return { step: { kind: 'warn-destruction', mail: 'destruction-warning', remainingMs: (flags.maxAlerts - sent) * flags.destructionNotificationIntervalMs }, requeueAfterMs: flags.destructionNotificationIntervalMs };
  }
  return { step: { kind: 'destroy', mail: 'destruction' } };
}

/** The Template's alert count: its annotation when a whole number ≥ 0, else the flag's. */
export function templateMaxAlerts(annotations: Record<string, string> | undefined, flag: number): number {
  const v = annotations?.[CUSTOM_ALERTS_ANNOTATION];
  return v !== undefined && /^[0-9]+$/.test(v.trim()) ? Number(v.trim()) : flag;
}
