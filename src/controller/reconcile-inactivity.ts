/**
 * Inactivity (docs/behaviour.md §8.4): an idle running Instance is warned, then stopped (persistent)
 * or deleted; a persistent one left powered off is warned, then deleted with its disk. The decision
 * is model/inactivity.ts; here are the reads (Prometheus, the caches) and the writes, in the order
 * that keeps each mail at most once per step (§8.5):
 *   1. a warning waits until the relay accepts a connection (else nothing is recorded, and no stop
 *      can follow warnings that were never sent);
 *   2. the step is recorded in the Instance's annotations, conditional on the resourceVersion read;
 *   3. the mail is sent, its Message-ID derived from the step.
 * A crash between 2 and 3 loses that one mail; it never sends a second. Every stop and delete is
 * conditional on the Instance being the one read, so a student starting it meanwhile wins.
 */
import { INPUT_KINDS, TENANT_REF, TEMPLATE_REF, type Template, type Tenant } from '../inputs/types.ts';
import { parseLifespan } from '../model/automation.ts';
import { goDuration } from '../model/duration.ts';
import { activityCheckDue, INACTIVITY_ANNOTATION as A, INACTIVITY_IGNORE_LABEL, planInactivity, templateMaxAlerts, type InactivityPlan, type MeasuredActivity } from '../model/inactivity.ts';
import { instanceStatusFacts } from '../model/status-shape.ts';
import type { MailKind } from '../integrations/mail/templates.ts';
import type { CachedObject } from '../kube/informer.ts';
import { isNotFound } from '../kube/client.ts';
import type { ApiAccess } from '../kube/resources.ts';
import type { AutomationState } from './automation-state.ts';
import { automationTarget } from './automation-target.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';

export const INACTIVITY_API_ACCESS: readonly ApiAccess[] = [{ apiVersion: INPUT_KINDS.Instance.apiVersion, kind: 'Instance', verbs: ['patch', 'delete'] }];

export async function reconcileInactivity(ctx: ControllerContext, auto: AutomationState, namespace: string, name: string): Promise<ReconcileResult> {
  const key = `InstanceInactivity/${namespace}/${name}`;
  const opts = auto.inactivity;
  const live = automationTarget(ctx, namespace, name);
  if (!opts || !live) return {};
  const spec = (live.spec ?? {}) as { running?: boolean; prettyName?: string; [TEMPLATE_REF]?: { name: string; namespace?: string }; [TENANT_REF]?: { name: string } };
  const ref = spec[TEMPLATE_REF];
  const template = ref?.name ? ctx.caches.inventory.templates.get(`${ref.namespace || namespace}/${ref.name}`) : undefined;
  // A 2e8aeb9 Template has no cleanup: nothing to do. A Template event brings the Instance back.
  const cleanup = (template?.spec as Template['spec'] | undefined)?.cleanup;
  if (!template || !cleanup) return {};
  let policy;
  try {
    policy = { stopAfter: parseLifespan(cleanup.stopAfterInactivity), deleteAfter: parseLifespan(cleanup.deleteAfterInactivity), maxAlerts: templateMaxAlerts(template.metadata.annotations, opts.flags.maxAlerts) };
  } catch (e) {
    // Not retried: only a change of the Template fixes it, and that enqueues us.
    await auto.warn(ctx, key, live, 'InactivityFailed', `Template ${template.metadata.namespace}/${template.metadata.name}: ${(e as Error).message}`);
    return {};
  }
  const facts = {
    running: spec.running !== false,
    persistent: template.spec.environmentList.some((e) => e.persistent === true),
    annotations: live.metadata.annotations ?? {},
    namespaceIgnored: ctx.caches.namespaces.get(undefined, namespace)?.metadata.labels?.[INACTIVITY_IGNORE_LABEL] === 'true',
    now: ctx.now(),
    jitter: opts.random(),
  };

  let measured: MeasuredActivity | undefined;
  if (activityCheckDue(facts, opts.flags)) {
    const ips = ipsOf(live);
    try {
      await opts.prometheus.checkHealthy();
      const at = await opts.prometheus.lastActivity(namespace, name, ips);
      measured = at === undefined ? 'none' : { at };
      ctx.metrics.activitySourceUp.set(1);
    } catch (e) {
      ctx.metrics.activitySourceUp.set(0);
      const message = `activity unknown, so nothing is stopped or deleted: ${(e as Error).message}`;
      // An Event on the Instances whose step waits for it; the others (thousands, in an outage) only wait.
      const last = Date.parse(facts.annotations[A.lastActivity] ?? '');
      const held = !policy.stopAfter.never && !facts.namespaceIgnored && !(last + policy.stopAfter.ms > facts.now);
      if (held) await auto.warn(ctx, key, live, 'ActivityUnknown', message);
      else ctx.log.debug({ key }, message);
      throw new Error(message); // backs off and retries
    }
  } else if (facts.running) {
    // Checked moments ago: the next check decides, on fresh activity.
    const last = Date.parse(facts.annotations[A.lastActivityCheck] ?? '');
    return { requeueAfterMs: Math.max(1000, last + opts.flags.checkThresholdMs - facts.now) };
  }

  const plan = planInactivity(facts, policy, opts.flags, measured);
  auto.cleared(key);
  const mailing = opts.flags.notifications && opts.mailer !== undefined;
  const step = plan.step;

  if (step.kind === 'warn' || step.kind === 'warn-destruction') {
    if (mailing) {
      try {
        await opts.mailer!.verify();
      } catch (e) {
        const message = `the mail relay cannot take the warning now, so it is not counted: ${(e as Error).message}`;
        await auto.warn(ctx, key, live, 'NotificationDeferred', message);
        throw new Error(message);
      }
    }
    await record(ctx, live, plan);
    ctx.metrics.inactivitySteps.inc({ step: step.kind });
    const warning = step.kind === 'warn' ? { counter: A.alertsSent, reason: 'InactivityWarning', state: 'idle' } : { counter: A.destructionAlertsSent, reason: 'DestructionWarning', state: 'powered off' };
    const n = plan.annotations[warning.counter];
    await ctx.events.record(live, 'Normal', warning.reason, `${warning.state}; warning ${n}, ${goDuration(step.remainingMs)} left`);
    // The same step (count, and the activity it counts from) gives the same Message-ID.
    if (mailing) await mail(ctx, auto, live, step.mail, goDuration(step.remainingMs), `${live.metadata.uid}.${step.kind}.${n}.${Date.parse(facts.annotations[A.lastActivity] ?? '') || 0}`);
    return { requeueAfterMs: plan.requeueAfterMs };
  }

  if (step.kind === 'stop') {
    await record(ctx, live, plan);
    ctx.metrics.inactivitySteps.inc({ step: 'stop' });
    ctx.log.info({ key }, 'idle instance stopped');
    await ctx.events.record(live, 'Normal', 'InactivityStopped', 'idle for longer than the Template allows; stopped');
    if (mailing) await mail(ctx, auto, live, step.mail, '0s', `${live.metadata.uid}.stop.${Date.parse(facts.annotations[A.lastActivity] ?? '') || 0}`);
    return {};
  }

  if (step.kind === 'delete' || step.kind === 'destroy') {
    const current = Object.keys(plan.annotations).length ? await record(ctx, live, plan) : live;
    try {
      await ctx.client.request('DELETE', ctx.client.path(live.apiVersion, 'Instance', namespace, name), {
        // This very Instance as read: started or edited meanwhile, it is not deleted.
        body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: live.metadata.uid, resourceVersion: current.metadata.resourceVersion } },
      });
    } catch (e) {
      if (isNotFound(e)) return {};
      throw e;
    }
    ctx.metrics.inactivitySteps.inc({ step: step.kind });
    const why = step.kind === 'delete' ? 'idle for longer than the Template allows' : 'powered off for longer than the Template allows';
    ctx.log.info({ key }, `instance deleted: ${why}`);
    await ctx.events.record(live, 'Normal', step.kind === 'delete' ? 'InactivityDeleted' : 'InactivityDestroyed', `deleted: ${why}`);
    if (mailing) await mail(ctx, auto, live, step.mail, '0s', `${live.metadata.uid}.${step.kind}`);
    return {};
  }

  if (Object.keys(plan.annotations).length) await record(ctx, live, plan);
  return { requeueAfterMs: plan.requeueAfterMs };
}

/** Every environment's IP (the SSH queries are per IP). */
function ipsOf(live: CachedObject): string[] {
  const facts = instanceStatusFacts(live.status);
  const ips = new Set<string>();
  for (const e of facts.environments ?? []) if (e.ip) ips.add(e.ip);
  if (facts.ip) ips.add(facts.ip);
  return [...ips];
}

/**
 * Writes the plan's annotations (and, for a stop, `running: false`). A step is written only over
 * the Instance as read: a stale cache (our own last write not seen yet) must not count a warning twice. The
 * bookkeeping of a reconcile that takes no step goes unconditionally: the status writes of the
 * Instance's own reconciler would otherwise make it conflict, at every start, on every Instance.
 */
async function record(ctx: ControllerContext, live: CachedObject, plan: InactivityPlan): Promise<CachedObject> {
  const conditional = plan.step.kind !== 'none';
  const stop = plan.step.kind === 'stop';
  return ctx.client.request<CachedObject>('PATCH', ctx.client.path(live.apiVersion, 'Instance', live.metadata.namespace, live.metadata.name), {
    body: { metadata: { ...(conditional ? { resourceVersion: live.metadata.resourceVersion } : {}), annotations: plan.annotations }, ...(stop ? { spec: { running: false } } : {}) },
    contentType: 'application/merge-patch+json',
  });
}

/** Sends a step's mail once: a failure is reported, not retried (the step is already recorded). */
async function mail(ctx: ControllerContext, auto: AutomationState, live: CachedObject, kind: MailKind, remainingTime: string, id: string): Promise<void> {
  const mailer = auto.inactivity!.mailer!;
  const spec = live.spec as { prettyName?: string; [TENANT_REF]?: { name: string } };
  const tenantName = spec[TENANT_REF]?.name ?? '';
  const tenant = ctx.caches.inventory.tenants.get(tenantName) as Tenant | undefined;
  try {
    const message = mailer.compose(kind, { tenantName, tenantEmail: tenant?.spec.email ?? '', prettyName: spec.prettyName || live.metadata.name, instanceName: live.metadata.name, remainingTime }, id);
    await mailer.send(message);
    ctx.metrics.mails.inc({ kind, result: 'sent' });
    ctx.log.info({ instance: `${live.metadata.namespace}/${live.metadata.name}`, kind }, 'mail sent');
  } catch (e) {
    ctx.metrics.mails.inc({ kind, result: 'failed' });
    const message = `the ${kind} mail to Tenant ${tenantName} was not sent, and is not retried: ${(e as Error).message}`;
    ctx.log.warn({ instance: `${live.metadata.namespace}/${live.metadata.name}`, kind }, message);
    await ctx.events.record(live, 'Warning', 'NotificationFailed', message);
  }
}
