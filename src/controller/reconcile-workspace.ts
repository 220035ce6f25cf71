/**
 * Workspace reconciler (docs/behaviour.md §4): finalizer, compose → apply → prune of its set, Keycloak roles,
 * status (namespace, subscription, ready); deletion removes the Keycloak roles and unsubscribes
 * the Tenants enrolled in it (§4.5). Watches: Workspaces (not status); children map by label.
 */
import type { Tenant } from '../inputs/types.ts';
import { compose, renderUnit } from '../compose/compose.ts';
import type { ParentRef } from '../model/labels.ts';
import { workspaceNamespaceName, workspaceRoleDescription } from '../model/naming.ts';
import { matchesTargetLabel } from '../model/tenant-plan.ts';
import { formatKeycloakErrors } from '../integrations/keycloak/index.ts';
import { applySet, writeStatus } from './apply-set.ts';
import { candidateEnrolmentPatch, workspaceAutoEnrollPatch, workspaceRemovalPatch, type MetadataPatch } from './parent-patches.ts';
import type { Caches } from './caches.ts';
import { TENANT_FINALIZER, type ControllerContext, type ReconcileResult } from './context.ts';
import { setFinalizer } from './finalizer.ts';
import { enqueueDependents } from './dependents.ts';
import { metadataOrSpecChanged } from './predicates.ts';
import { failedValidation } from './terminal-error.ts';

export async function reconcileWorkspace(ctx: ControllerContext, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.workspaces.get(undefined, name);
  if (!live || !matchesTargetLabel(live, ctx.config)) return {};
  if (live.metadata.deletionTimestamp) return deleteWorkspace(ctx, name);
  const errors: string[] = [];
  try {
    await setFinalizer(ctx, live, true);
  } catch (e) {
    errors.push(`finalizer: ${(e as Error).message}`);
  }
  const workspace = ctx.caches.inventory.workspaces.get(name);
  if (!workspace) throw failedValidation(ctx.caches, live);
  const parent: ParentRef = { kind: 'Workspace', name };
  const unit = compose(ctx.caches.inventory, ctx.config, { parent: { kind: 'Workspace', name } }).units[0];
  const objects = unit ? renderUnit(unit) : [];
  const outcome = await applySet(ctx, parent, live, objects);
  for (const e of outcome.errors) errors.push(`${e.object}: ${e.error.message}`);
  const nsName = workspaceNamespaceName(name);
  // What is live, not what the apply would have set: a refused set (a namespace not adopted) applies nothing.
  const cachedNs = ctx.caches.namespaces.get(undefined, nsName);
  const nsOk =
    outcome.live.has(`Namespace/${nsName}`) || (!!cachedNs && !cachedNs.metadata.deletionTimestamp && (cachedNs.metadata.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid));

  let keycloak: 'Ok' | 'Failed' = 'Failed';
  if (ctx.keycloak) {
    const level = ctx.caches.inventory.level;
    const res = await ctx.keycloak.ensureWorkspaceRoles(name, (role) => workspaceRoleDescription(workspace.spec.prettyName, role, level));
    keycloak = res.ok ? 'Ok' : 'Failed';
    if (!res.ok) errors.push(`keycloak: ${formatKeycloakErrors(res.errors)}`);
  }
  // e62be9e: the autoenroll label, and candidates of a Workspace that no longer takes approvals (§16.4).
  const patch = (obj: { apiVersion: string; kind: string; metadata: { name: string } }, body: MetadataPatch) =>
    ctx.client.request('PATCH', ctx.client.path(obj.apiVersion, obj.kind, undefined, obj.metadata.name), { body, contentType: 'application/merge-patch+json' });
  const labelPatch = workspaceAutoEnrollPatch(workspace, live.metadata.labels, ctx.caches.inventory.level);
  if (labelPatch) {
    try {
      await patch(live, labelPatch);
    } catch (e) {
      errors.push(`autoenroll label: ${(e as Error).message}`);
    }
  }
  if (workspace.spec.autoEnroll !== 'withApproval') {
    // Only Tenants labelled candidate of it are patched: none at 2e8aeb9, which has no such role.
    for (const t of ctx.caches.tenants.byIndex('workspace', name)) {
      const body = candidateEnrolmentPatch(t as unknown as Tenant, workspace);
      if (!body) continue;
      try {
        await patch(t, body);
      } catch (e) {
        errors.push(`candidate ${t.metadata.name}: ${(e as Error).message}`);
      }
    }
  }
  await writeStatus(ctx, live, {
    namespace: nsOk ? { name: nsName, created: true } : { name: '', created: false },
    subscription: { keycloak },
    ready: errors.length === 0,
  });
  if (errors.length) {
    await ctx.events.record(live, 'Warning', 'ReconcileFailed', errors.join('; '));
    throw new Error(`Workspace ${name}: ${errors.join('; ')}`);
  }
  return {};
}

async function deleteWorkspace(ctx: ControllerContext, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.workspaces.get(undefined, name)!;
  if (!(live.metadata.finalizers ?? []).includes(TENANT_FINALIZER)) return {};
  const errors: string[] = [];
  if (ctx.keycloak) {
    const res = await ctx.keycloak.deleteWorkspaceRoles(name);
    if (!res.ok) errors.push(`keycloak: ${formatKeycloakErrors(res.errors)}`);
  }
  for (const t of ctx.caches.tenants.byIndex('workspace', name)) {
    const body = workspaceRemovalPatch(t as unknown as Tenant, name);
    if (!body) continue;
    try {
      await ctx.client.request('PATCH', ctx.client.path(t.apiVersion, 'Tenant', undefined, t.metadata.name), {
        body,
        contentType: 'application/merge-patch+json',
      });
    } catch (e) {
      errors.push(`unsubscribe ${t.metadata.name}: ${(e as Error).message}`);
    }
  }
  if (errors.length) throw new Error(`Workspace ${name} deletion: ${errors.join('; ')}`);
  await setFinalizer(ctx, live, false);
  return {};
}

export function watchWorkspaces(caches: Caches, enqueue: (key: string) => void): void {
  // The Tenants enrolled in a workspace, by spec: a deleted Workspace unsubscribes them (deleteWorkspace).
  caches.tenants.addIndex('workspace', (t) => ((t.spec as Partial<Tenant['spec']> | undefined)?.workspaces ?? []).map((w) => w.name));
  caches.workspaces.on((type, obj, old) => {
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    enqueue(`Workspace/${obj.metadata.name}`);
    // Tenants whose last reconcile looked it up: their quota, labels and failingWorkspaces depend on it.
    enqueueDependents(caches, 'Workspace', obj, old, 'Tenant', enqueue);
  });
}
