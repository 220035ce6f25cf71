/**
 * Content submission (docs/behaviour.md §8.2): for an Instance with `instance-submission-requested=true` (and not
 * completed), create the `N-submitter` Job once (spec only at creation) and, when it has succeeded,
 * record `status.automation.submissionTime` and flip the labels to completed.
 */
import { renderSubmissionJob } from '../compose/submission.ts';
import { submissionPending, submissionTime, SUBMISSION_COMPLETED_LABELS, SUBMISSION_SKIPPED_LABELS } from '../model/automation.ts';
import { submitterJobName } from '../model/naming.ts';
import { contentDestination } from '../model/customization-urls.ts';
import { writeInstanceStatus } from './status-writes.ts';
import { automationEnvironment, automationTarget, validatedInstance } from './automation-target.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { AutomationState } from './automation-state.ts';
import { isConflict } from '../kube/client.ts';
import { INSTANCE_PATCH_ACCESS, type ApiAccess } from '../kube/resources.ts';

/** The submitter Job is created once; the Instance's labels and `status.automation` are patched. */
export const SUBMISSION_API_ACCESS: readonly ApiAccess[] = [
  { apiVersion: 'batch/v1', kind: 'Job', verbs: ['create'] },
  ...INSTANCE_PATCH_ACCESS,
];

export async function reconcileSubmission(ctx: ControllerContext, auto: AutomationState, namespace: string, name: string): Promise<ReconcileResult> {
  const key = `InstanceSubmission/${namespace}/${name}`;
  const live = automationTarget(ctx, namespace, name, submissionPending);
  if (!live) return {};
  const instance = validatedInstance(ctx, live);
  const env = automationEnvironment(ctx, instance);
  if (typeof env === 'string') {
    await auto.warn(ctx, key, live, 'SubmissionFailed', env);
    throw new Error(env);
  }
  const destination = contentDestination(instance, env.name) ?? '';
  if (!destination || !env.persistent) {
    // Nothing to upload from (or to): the request is withdrawn, as upstream.
    await patchLabels(ctx, live, SUBMISSION_SKIPPED_LABELS);
    ctx.log.info({ key, persistent: env.persistent, destination: !!destination }, 'submission not possible: request withdrawn');
    return {};
  }

  const job = ctx.caches.child('batch/v1', 'Job')?.get(namespace, submitterJobName(name)) as (CachedObject & { status?: { succeeded?: number; completionTime?: string } }) | undefined;
  if (!job) {
    const obj = renderSubmissionJob({
      instance,
      envName: env.name,
      level: ctx.caches.inventory.level,
      destinationUrl: destination,
      config: ctx.config,
      owner: { apiVersion: live.apiVersion, kind: 'Instance', name, uid: live.metadata.uid! },
    });
    try {
      await ctx.client.request('POST', ctx.client.path('batch/v1', 'Job', namespace), { body: obj });
    } catch (e) {
      if (isConflict(e)) return {}; // created already; its watch event has not reached the cache yet
      await auto.warn(ctx, key, live, 'SubmissionFailed', `creating Job ${obj.metadata.name}: ${(e as Error).message}`);
      throw e;
    }
    auto.cleared(key);
    await ctx.events.record(live, 'Normal', 'SubmissionStarted', `Job ${obj.metadata.name} uploads the content to ${destination}`);
    return {}; // the Job's events bring us back
  }
  const time = submissionTime(job, ctx.now());
  if (!time) {
    // Upstream waits on a failed Job for ever; we wait too, but say so.
    const failed = (job.status as { conditions?: { type: string; status: string; reason?: string; message?: string }[] } | undefined)?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
    if (failed) await auto.warn(ctx, key, live, 'SubmissionFailed', `Job ${job.metadata.name} failed: ${failed.reason ?? ''}${failed.message ? ` (${failed.message})` : ''}; delete it to retry`);
    return {};
  }
  await writeInstanceStatus(ctx, live, { automation: { submissionTime: time } });
  await patchLabels(ctx, live, SUBMISSION_COMPLETED_LABELS);
  auto.cleared(key);
  await ctx.events.record(live, 'Normal', 'SubmissionCompleted', `content uploaded by Job ${job.metadata.name}`);
  return {};
}

async function patchLabels(ctx: ControllerContext, live: CachedObject, labels: Readonly<Record<string, string>>): Promise<void> {
  await ctx.client.request('PATCH', ctx.client.path(live.apiVersion, 'Instance', live.metadata.namespace, live.metadata.name), {
    body: { metadata: { labels } },
    contentType: 'application/merge-patch+json',
  });
}
