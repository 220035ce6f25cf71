import { describe, expect, it } from 'vitest';
import { parseLifespan, rfc3339 } from '../../../src/model/automation.ts';
import { activityCheckDue, INACTIVITY_ANNOTATION as A, planInactivity, templateMaxAlerts, type InactivityFacts, type InactivityFlags, type InactivityPlan } from '../../../src/model/inactivity.ts';

const MIN = 60_000;
const H = 60 * MIN;
const flags: InactivityFlags = {
  maxAlerts: 3,
  notifications: true,
  notificationIntervalMs: 24 * H,
  destructionNotificationIntervalMs: 24 * H,
  marginMs: MIN,
  minRequeueMs: H,
  maxRequeueMs: 6 * H,
  checkThresholdMs: 30_000,
};
const policy = { stopAfter: parseLifespan('10d'), deleteAfter: parseLifespan('15d'), maxAlerts: 3 };
const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => rfc3339(ms);

function facts(over: Partial<InactivityFacts> = {}): InactivityFacts {
  return { running: true, persistent: true, annotations: {}, namespaceIgnored: false, now: T0, jitter: 0, ...over };
}

/** The annotations after a plan's writes. */
function apply(ann: Record<string, string>, plan: InactivityPlan): Record<string, string> {
  const out = { ...ann };
  for (const [k, v] of Object.entries(plan.annotations)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** Runs reconciles at the times given (Prometheus showing nothing new), as the controller would: each on the annotations the last one wrote. */
function run(times: number[], start: Record<string, string>, f: Partial<InactivityFacts> = {}, fl = flags) {
  let ann = start;
  let running = f.running ?? true;
  const steps: string[] = [];
  for (const now of times) {
    const plan = planInactivity(facts({ ...f, running, annotations: ann, now }), policy, fl, running ? 'none' : undefined);
    ann = apply(ann, plan);
    steps.push(plan.step.kind);
    if (plan.step.kind === 'stop') running = false;
  }
  return { steps, ann };
}

describe('inactivity: an idle running Instance', () => {
  const idle = { [A.lastRunning]: 'true', [A.alertsSent]: '0', [A.lastActivity]: at(T0) };

  it('is left alone before stopAfterInactivity, and requeued when it runs out (plus the margin) or at the refresh, whichever is first', () => {
    const p = planInactivity(facts({ annotations: idle, now: T0 + 9 * 24 * H + 23 * H }), policy, flags, 'none');
    expect(p.step.kind).toBe('none');
    expect(p.requeueAfterMs).toBe(H); // the refresh (min, jitter 0) comes before 1 h + margin
    const q = planInactivity(facts({ annotations: idle, now: T0 + 10 * 24 * H - 10 * MIN }), policy, flags, 'none');
    expect(q.requeueAfterMs).toBe(11 * MIN);
  });

  it('is warned maxAlerts times an interval apart, then stopped one interval after the last warning', () => {
    const d10 = T0 + 10 * 24 * H;
    const { steps, ann } = run([d10, d10 + H, d10 + 24 * H, d10 + 48 * H, d10 + 71 * H, d10 + 72 * H - MIN], idle);
    expect(steps).toEqual(['warn', 'none', 'warn', 'warn', 'none', 'stop']);
    expect(ann[A.alertsSent]).toBe('3');
    expect(ann[A.lastRunning]).toBe('false');
    expect(ann[A.lastPoweredOff]).toBe(at(d10 + 72 * H - MIN));
  });

  it('the warning says how long is left, and the plan records the count before any mail', () => {
    const p = planInactivity(facts({ annotations: idle, now: T0 + 10 * 24 * H }), policy, flags, 'none');
    expect(p.step).toEqual({ kind: 'warn', mail: 'inactivity-warning', remainingMs: 3 * 24 * H });
    expect(p.annotations).toMatchObject({ [A.alertsSent]: '1', [A.lastNotification]: at(T0 + 10 * 24 * H), [A.lastActivityCheck]: at(T0 + 10 * 24 * H) });
    expect(p.requeueAfterMs).toBe(24 * H);
  });

  it('an ephemeral one is deleted instead of stopped', () => {
    const d10 = T0 + 10 * 24 * H;
    const { steps } = run([d10, d10 + 24 * H, d10 + 48 * H, d10 + 72 * H], idle, { persistent: false });
    expect(steps).toEqual(['warn', 'warn', 'warn', 'delete']);
  });

  it('without notifications it is stopped at once', () => {
    const p = planInactivity(facts({ annotations: idle, now: T0 + 10 * 24 * H }), policy, { ...flags, notifications: false }, 'none');
    expect(p.step.kind).toBe('stop');
  });

  it('the Template\'s alert count replaces the flag\'s, and 0 stops at once', () => {
    const p = planInactivity(facts({ annotations: idle, now: T0 + 10 * 24 * H }), { ...policy, maxAlerts: 0 }, flags, 'none');
    expect(p.step.kind).toBe('stop');
    expect(templateMaxAlerts({ 'crownlabs.polito.it/custom-number-alerts': '5' }, 3)).toBe(5);
    expect(templateMaxAlerts({ 'crownlabs.polito.it/custom-number-alerts': 'five' }, 3)).toBe(3);
    expect(templateMaxAlerts(undefined, 3)).toBe(3);
  });

  it('activity measured between warnings restarts the count, and nothing is stopped', () => {
    const d10 = T0 + 10 * 24 * H;
    const warned = apply(idle, planInactivity(facts({ annotations: idle, now: d10 }), policy, flags, 'none'));
    expect(warned[A.alertsSent]).toBe('1');
    const access = d10 + 2 * H;
    const p = planInactivity(facts({ annotations: warned, now: d10 + 24 * H }), policy, flags, { at: access });
    expect(p.step.kind).toBe('none');
    expect(p.annotations).toMatchObject({ [A.lastActivity]: at(access), [A.alertsSent]: '0' });
  });

  it('an activity sample older than the recorded one does not move it back', () => {
    const p = planInactivity(facts({ annotations: idle, now: T0 + H }), policy, flags, { at: T0 - H });
    expect(p.annotations[A.lastActivity]).toBeUndefined();
  });

  it('is never touched in a namespace that opted out, nor with stopAfterInactivity never', () => {
    const now = T0 + 30 * 24 * H;
    expect(planInactivity(facts({ annotations: idle, now, namespaceIgnored: true }), policy, flags, 'none').step.kind).toBe('none');
    expect(planInactivity(facts({ annotations: idle, now }), { ...policy, stopAfter: parseLifespan('never') }, flags, 'none').step.kind).toBe('none');
  });

  it('hand-edited annotations (a count that is no number, a time that is no time) neither block it nor skip warnings', () => {
    const edited = { ...idle, [A.alertsSent]: 'lots', [A.lastNotification]: 'yesterday' };
    const p = planInactivity(facts({ annotations: edited, now: T0 + 10 * 24 * H }), policy, flags, 'none');
    expect(p.step.kind).toBe('warn');
    expect(p.annotations[A.alertsSent]).toBe('1');
    // A last-activity that is no time is counted from now, and runs out.
    const { steps, ann } = run([T0, T0 + 10 * 24 * H], { ...idle, [A.lastActivity]: 'not a time' });
    expect(steps).toEqual(['none', 'warn']);
    expect(ann[A.lastActivity]).toBe(at(T0));
  });

  it('starts counting from the first reconcile when it carries no annotations', () => {
    const p = planInactivity(facts({ annotations: {}, now: T0 }), policy, flags, 'none');
    expect(p.annotations).toMatchObject({ [A.alertsSent]: '0', [A.lastActivity]: at(T0), [A.lastRunning]: 'true' });
    expect(p.step.kind).toBe('none');
  });
});

describe('inactivity: a paused Instance started again', () => {
  it('begins a new count from now: alerts and destruction alerts reset, last-activity now', () => {
    const stopped = { [A.lastRunning]: 'false', [A.alertsSent]: '3', [A.lastActivity]: at(T0), [A.lastPoweredOff]: at(T0 + 12 * 24 * H), [A.destructionAlertsSent]: '2', [A.lastDestructionNotification]: at(T0 + 13 * 24 * H) };
    const now = T0 + 14 * 24 * H;
    const p = planInactivity(facts({ annotations: stopped, now }), policy, flags, 'none');
    expect(p.step.kind).toBe('none');
    expect(p.annotations).toMatchObject({ [A.alertsSent]: '0', [A.lastActivity]: at(now), [A.destructionAlertsSent]: '0', [A.lastDestructionNotification]: '', [A.lastRunning]: 'true', [A.lastPoweredOff]: null });
  });
});

describe('inactivity: a persistent Instance left powered off', () => {
  const off = { [A.lastRunning]: 'false', [A.alertsSent]: '0', [A.lastActivity]: at(T0), [A.lastPoweredOff]: at(T0) };

  it('records when it was first seen powered off', () => {
    const p = planInactivity(facts({ running: false, annotations: { [A.lastRunning]: 'true' }, now: T0 }), policy, flags, undefined);
    expect(p.annotations).toMatchObject({ [A.lastRunning]: 'false', [A.lastPoweredOff]: at(T0) });
  });

  it('is warned maxAlerts times after deleteAfterInactivity, then destroyed one interval after the last', () => {
    const d15 = T0 + 15 * 24 * H;
    const { steps } = run([d15 - H, d15, d15 + 24 * H, d15 + 48 * H, d15 + 60 * H, d15 + 72 * H], off, { running: false });
    expect(steps).toEqual(['none', 'warn-destruction', 'warn-destruction', 'warn-destruction', 'none', 'destroy']);
  });

  it('waits until deleteAfterInactivity with a requeue at its end, and never with deleteAfterInactivity never or in an opted-out namespace', () => {
    expect(planInactivity(facts({ running: false, annotations: off, now: T0 + 24 * H }), policy, flags, undefined).requeueAfterMs).toBe(14 * 24 * H + MIN);
    expect(planInactivity(facts({ running: false, annotations: off, now: T0 + 99 * 24 * H }), { ...policy, deleteAfter: parseLifespan('never') }, flags, undefined)).toEqual({ annotations: {}, step: { kind: 'none' } });
    expect(planInactivity(facts({ running: false, annotations: off, now: T0 + 99 * 24 * H, namespaceIgnored: true }), policy, flags, undefined).step.kind).toBe('none');
  });

  it('without notifications it is destroyed at once', () => {
    expect(planInactivity(facts({ running: false, annotations: off, now: T0 + 15 * 24 * H }), policy, { ...flags, notifications: false }, undefined).step.kind).toBe('destroy');
  });
});

describe('activityCheckDue', () => {
  it('asks Prometheus for a running Instance whose last check is older than the threshold, never for a stopped one', () => {
    expect(activityCheckDue({ running: true, annotations: {}, now: T0 }, flags)).toBe(true);
    expect(activityCheckDue({ running: true, annotations: { [A.lastActivityCheck]: at(T0 - 10_000) }, now: T0 }, flags)).toBe(false);
    expect(activityCheckDue({ running: true, annotations: { [A.lastActivityCheck]: at(T0 - 30_000) }, now: T0 }, flags)).toBe(true);
    expect(activityCheckDue({ running: false, annotations: {}, now: T0 }, flags)).toBe(false);
  });
});
