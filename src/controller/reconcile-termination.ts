/**
 * Termination by status check (docs/behaviour.md §8.1): an Instance labelled
 * `watch-for-instance-termination=true` is checked every `--instance-termination-status-check-interval`;
 * a 404 stops it (labels + `spec.running=false`). A check is due only when the interval has passed
 * since `status.automation.lastCheckTime`, so an event or a resync in between sends nothing.
 */
import type { Instance } from '../inputs/types.ts';
import { instanceStatusFacts } from '../model/status-shape.ts';
import { interpretStatusCheck, rfc3339, submissionRequired, terminationLabels, watchedForTermination } from '../model/automation.ts';
import { writeInstanceStatus } from './status-writes.ts';
import { automationEnvironment, automationTarget, validatedInstance } from './automation-target.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { AutomationState } from './automation-state.ts';
import { INSTANCE_PATCH_ACCESS, type ApiAccess } from '../kube/resources.ts';
import { getStatusCheck } from './status-check.ts';
import { statusCheckUrl } from '../model/customization-urls.ts';

/** A stopped Instance gets its labels and `spec.running` patched; `status.automation` is patched. */
export const TERMINATION_API_ACCESS: readonly ApiAccess[] = INSTANCE_PATCH_ACCESS;

export async function reconcileTermination(ctx: ControllerContext, auto: AutomationState, namespace: string, name: string): Promise<ReconcileResult> {
  const key = `InstanceTermination/${namespace}/${name}`;
  const live = automationTarget(ctx, namespace, name, watchedForTermination);
  if (!live) return {};
  const instance = validatedInstance(ctx, live);
  const uid = live.metadata.uid ?? '';
  const now = ctx.now();

  if (!auto.terminationDue.has(uid)) {
    // The status in the cache, or our own write the watch has not brought back yet.
    const written = Date.parse(instanceStatusFacts(live.status).automation?.lastCheckTime ?? '');
    const last = Math.max(Number.isFinite(written) ? written : -Infinity, auto.lastCheck.get(uid) ?? -Infinity);
    if (Number.isFinite(last) && now < last + auto.statusCheckIntervalMs) return { requeueAfterMs: last + auto.statusCheckIntervalMs - now };
    const url = statusCheckUrl(instance);
    if (!url) return fail(ctx, auto, key, live, 'StatusCheckFailed', 'the status-check URL (spec.statusCheckUrl, or spec.customizationUrls.statusCheck) is missing');
    let outcome;
    try {
      const answer = await getStatusCheck(url, auto.statusCheckTimeoutMs);
      outcome = interpretStatusCheck(answer.statusCode, answer.body, now);
    } catch (e) {
      return fail(ctx, auto, key, live, 'StatusCheckFailed', (e as Error).message);
    }
    if (outcome.action === 'error') return fail(ctx, auto, key, live, 'StatusCheckFailed', `${url}: ${outcome.message}`);
    const automation: Record<string, string> = { lastCheckTime: rfc3339(now) };
    if (outcome.terminationTime) automation.terminationTime = outcome.terminationTime;
    await writeInstanceStatus(ctx, live, { automation });
    auto.lastCheck.set(uid, Math.floor(now / 1000) * 1000);
    auto.cleared(key);
    if (outcome.action === 'requeue') return { requeueAfterMs: auto.statusCheckIntervalMs };
    auto.terminationDue.add(uid);
  }

  await terminate(ctx, auto, key, live, instance);
  auto.terminationDue.delete(uid);
  auto.lastCheck.delete(uid);
  return {};
}

/** docs/behaviour.md §8.1 "Terminate": labels and `spec.running=false`, merge-patched (only these fields). */
async function terminate(ctx: ControllerContext, auto: AutomationState, key: string, live: CachedObject, instance: Instance): Promise<void> {
  const env = automationEnvironment(ctx, instance);
  if (typeof env === 'string') {
    await fail(ctx, auto, key, live, 'TerminationFailed', env);
    return;
  }
  const submission = submissionRequired(instance, env);
  await ctx.client.request('PATCH', ctx.client.path(live.apiVersion, 'Instance', live.metadata.namespace, live.metadata.name), {
    body: { metadata: { labels: terminationLabels(submission) }, spec: { running: false } },
    contentType: 'application/merge-patch+json',
  });
  auto.cleared(key);
  ctx.log.info({ key, submission }, 'instance terminated');
  await ctx.events.record(live, 'Normal', 'Terminated', `status check ended the instance; stopped${submission ? ', content submission requested' : ''}`);
}

/** Reports a failure (Warning Event once, log) and throws it so the key backs off and retries. */
async function fail(ctx: ControllerContext, auto: AutomationState, key: string, live: CachedObject, reason: string, message: string): Promise<never> {
  await auto.warn(ctx, key, live, reason, message);
  throw new Error(message);
}
