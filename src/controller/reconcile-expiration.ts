/**
 * Template `deleteAfter` (e62be9e: `cleanup.deleteAfterCreation`, §16.3) expiration (docs/behaviour.md §8.3, done by the controller instead of a cron, Decision 8):
 * an Instance is requeued at its expiry time (creationTimestamp + lifespan) and deleted then —
 * as a server-side dry run with `--expiration-dry-run`, reported by a log line and an Event.
 * Namespaces labelled `crownlabs.polito.it/expiration-ignore=true` are skipped (upstream HEAD).
 */
import { INPUT_KINDS, TEMPLATE_REF } from '../inputs/types.ts';
import { EXPIRATION_IGNORE_LABEL, expiryTime, parseLifespan, rfc3339, templateLifespan } from '../model/automation.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import { automationTarget } from './automation-target.ts';
import type { AutomationState } from './automation-state.ts';
import { isNotFound } from '../kube/client.ts';
import type { ApiAccess } from '../kube/resources.ts';

/** Expired Instances are deleted (or dry-run deleted). */
export const EXPIRATION_API_ACCESS: readonly ApiAccess[] = [{ apiVersion: INPUT_KINDS.Instance.apiVersion, kind: 'Instance', verbs: ['delete'] }];

export async function reconcileExpiration(ctx: ControllerContext, auto: AutomationState, namespace: string, name: string): Promise<ReconcileResult> {
  const key = `InstanceExpiration/${namespace}/${name}`;
  const live = automationTarget(ctx, namespace, name);
  if (!live) return {};
  if (ctx.caches.namespaces.get(undefined, namespace)?.metadata.labels?.[EXPIRATION_IGNORE_LABEL] === 'true') return {};
  const ref = (live.spec as { [TEMPLATE_REF]?: { name: string; namespace?: string } } | undefined)?.[TEMPLATE_REF];
  if (!ref?.name) return {};
  // As the upstream cron: a reference without a namespace means `default`.
  const template = ctx.caches.inventory.templates.get(`${ref.namespace || 'default'}/${ref.name}`);
  if (!template) return {}; // a Template event brings the Instance back
  const lifespan = templateLifespan(template);
  let expiry: number | undefined;
  try {
    expiry = expiryTime(String(live.metadata.creationTimestamp ?? ''), parseLifespan(lifespan.value));
  } catch (e) {
    // Not retried: only a change of the Template (or Instance) can fix it, and that enqueues us.
    await auto.warn(ctx, key, live, 'ExpirationFailed', `Template ${template.metadata.namespace}/${template.metadata.name}: ${(e as Error).message}`);
    return {};
  }
  auto.cleared(key);
  if (expiry === undefined) return {};
  const remaining = expiry - ctx.now();
  if (remaining > 0) return { requeueAfterMs: remaining };

  const uid = live.metadata.uid!;
  const dryRun = auto.expirationDryRun;
  if (dryRun && auto.dryRunReported.has(uid)) return {};
  const message = `expired at ${rfc3339(expiry)} (Template ${template.metadata.name} ${lifespan.field} ${lifespan.value})`;
  try {
    await ctx.client.request('DELETE', ctx.client.path(live.apiVersion, 'Instance', namespace, name), {
      // Only this very Instance: a new one created under the same name is not expired with it.
      // With a body, the API server reads the options from it alone (dryRun as a query is ignored).
      body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid }, ...(dryRun ? { dryRun: ['All'] } : {}) },
    });
  } catch (e) {
    if (isNotFound(e)) return {};
    throw e;
  }
  if (dryRun) {
    auto.dryRunReported.add(uid);
    ctx.log.info({ key, dryRun }, `would delete: ${message}`);
    await ctx.events.record(live, 'Normal', 'ExpirationDryRun', `would be deleted: ${message}`);
  } else {
    ctx.log.info({ key }, `deleted: ${message}`);
    await ctx.events.record(live, 'Normal', 'Expired', `deleted: ${message}`);
  }
  return {};
}
