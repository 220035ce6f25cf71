/**
 * Tenant reconciler (docs/behaviour.md §5): finalizer, keep-alive of the personal namespace, MyDrive share from
 * the bound PV, compose → apply → prune of its set, Keycloak user, status (every failing workspace,
 * Decision 4; always written), then the Tenant's own labels. Deletion removes the Keycloak user.
 *
 * Watches: Tenants (not status), Workspaces (via watchWorkspaces), PersistentVolumes (the Tenant
 * whose MyDrive PVC is bound to it), Instances and Templates (keep-alive counts them); children map by label.
 */
import type { Instance, Tenant } from '../inputs/types.ts';
import { compose, renderUnit } from '../compose/compose.ts';
import { formatKeycloakErrors, wantedWorkspaceRoles } from '../integrations/keycloak/index.ts';
import { COMPOSER, parentKey, type ParentRef } from '../model/labels.ts';
import { myDrivePvcName, PERSONAL_WORKSPACE_BINDING, sandboxNamespaceName, tenantNamespaceName } from '../model/naming.ts';
import { matchesTargetLabel, PERSONAL_WORKSPACE_FAILING, personalWorkspaceState, splitWorkspaces, tenantQuota } from '../model/tenant-plan.ts';
import { tenantLabelPatch } from './parent-patches.ts';
import { TENANT_QUOTA_NAME } from '../../constructs/tenant/tenant-quota.ts';
import { applySet, objectId } from './apply-set.ts';
import { provisioningPlan } from './provisioning-jobs.ts';
import { writeTenantStatus } from './status-writes.ts';
import type { TenantStatusFacts } from '../model/status-shape.ts';
import type { Caches } from './caches.ts';
import { TENANT_FINALIZER, type ControllerContext, type ReconcileResult } from './context.ts';
import { setFinalizer } from './finalizer.ts';
import { myDriveShare } from './mydrive-share.ts';
import { metadataOrSpecChanged } from './predicates.ts';
import { failedValidation } from './terminal-error.ts';

export async function reconcileTenant(ctx: ControllerContext, name: string): Promise<ReconcileResult> {
  const parent: ParentRef = { kind: 'Tenant', name };
  const own = parentKey(parent);
  const live = ctx.caches.tenants.get(undefined, name);
  // Not ours, or going: no Workspace change concerns it any more.
  if (!live || !matchesTargetLabel(live, ctx.config)) {
    ctx.caches.dependencies.remove(own);
    return {};
  }
  if (live.metadata.deletionTimestamp) {
    ctx.caches.dependencies.remove(own);
    return deleteTenant(ctx, name);
  }
  const errors: string[] = [];
  try {
    await setFinalizer(ctx, live, true);
  } catch (e) {
    errors.push(`finalizer: ${(e as Error).message}`);
  }
  const inv = ctx.caches.inventory;
  const tenant = inv.tenants.get(name);
  if (!tenant) throw failedValidation(ctx.caches, live);
  const personalNs = tenantNamespaceName(name);

  const instanceCount = ctx.caches.instances.byIndex('namespace', personalNs).length;
  // Indexed by watchTenants; asked only with a personal workspace (e62be9e).
  const templateCount = tenant.spec.personalWorkspace ? ctx.caches.templates.byIndex('namespace', personalNs).length : 0;
  const { keep, expiresAt } = personalNamespaceKeepAlive(tenant, instanceCount, ctx.now(), ctx.tenantNsKeepAliveMs, templateCount);

  const composition = compose(inv, ctx.config, {
    parent,
    keepPersonalNamespace: () => keep,
    myDriveShare: (t) => myDriveShare(ctx, t),
  });
  // Its Workspaces, found or not (the status below reads the same ones): watchWorkspaces fans out by them.
  ctx.caches.dependencies.set(own, composition.dependencies.get(own) ?? [own]);
  const unit = composition.units[0];
  const objects = unit ? renderUnit(unit) : [];
  // A MyDrive's provisioning Job (e62be9e) is created once.
  const provisioning = await provisioningPlan(ctx, objects);
  const outcome = await applySet(ctx, parent, live, provisioning.set, provisioning.keep);
  for (const e of outcome.errors) errors.push(`${e.object}: ${e.error.message}`);
  if (!outcome.errors.length) await provisioning.settle(outcome.live).catch((e: Error) => errors.push(`provisioning: ${e.message}`));
  // Status says what is live after this apply, not what it would have set: a refused set (a
  // collision, a namespace not adopted) applies nothing, and a failed object is as it was.
  const applied = (id: string) => outcome.live.has(id);
  const stillOurs = (id: string) => {
    const [, ns] = id.split('/');
    const cached = ctx.caches.namespaces.get(undefined, ns);
    return !!cached && !cached.metadata.deletionTimestamp && (cached.metadata.ownerReferences ?? []).some((r) => r.uid === live.metadata.uid);
  };
  const namespaceLive = (id: string) => applied(id) || (!objects.some((o) => objectId(o) === id) && stillOurs(id));

  const { existing, failing } = splitWorkspaces(tenant, inv.workspaces);
  let keycloak: 'Ok' | 'Failed' = 'Ok';
  // e62be9e's status.keycloak (docs/behaviour.md §16.2): what this sync learnt; nothing with Keycloak off.
  const keycloakUser: TenantStatusFacts['keycloak'] = { userCreated: { created: false }, userConfirmed: false, userSynchronized: false };
  if (ctx.keycloak) {
    const res = await ctx.keycloak.syncUser({
      username: name,
      firstName: tenant.spec.firstName,
      lastName: tenant.spec.lastName,
      email: tenant.spec.email.toLowerCase(),
      wantedRoles: wantedWorkspaceRoles(existing),
    });
    if (res.userId) keycloakUser.userCreated = { name: res.userId, created: true };
    keycloakUser.userSynchronized = res.ok;
    if (!res.ok) {
      keycloak = 'Failed';
      errors.push(`keycloak: ${formatKeycloakErrors(res.errors)}`);
    }
  }
  const sandboxNs = sandboxNamespaceName(name);
  const quotaId = objectId({ kind: 'ResourceQuota', metadata: { name: TENANT_QUOTA_NAME, namespace: personalNs } });
  // A quota rendered but not applied leaves status.quota as the last apply set it.
  const quota = objects.some((o) => objectId(o) === quotaId) && !applied(quotaId) ? undefined : tenantQuota(tenant, existing.map((e) => e.workspace), ctx.config);
  const personalLive = namespaceLive(`Namespace/${personalNs}`);
  const sandboxLive = namespaceLive(`Namespace/${sandboxNs}`);
  // e62be9e only: at 2e8aeb9 no Tenant has a personal workspace.
  const personal = personalWorkspaceState(tenant, personalLive, applied(`RoleBinding/${personalNs}/${PERSONAL_WORKSPACE_BINDING}`));
  await writeTenantStatus(ctx, live, {
    personalNamespace: personalLive ? { name: personalNs, created: true } : { name: '', created: false },
    sandboxNamespace: tenant.spec.createSandbox || sandboxLive ? { name: sandboxNs, created: sandboxLive } : { name: '', created: false },
    failingWorkspaces: personal.failing ? [...failing, PERSONAL_WORKSPACE_FAILING] : failing,
    subscriptions: { keycloak },
    ready: errors.length === 0,
    ...(quota ? { quota } : {}),
    keycloak: keycloakUser,
    personalWorkspaceCreated: personal.created,
  });

  const labelPatch = tenantLabelPatch(tenant, live.metadata.labels, inv.workspaces, ctx.config);
  if (labelPatch) {
    await ctx.client.request('PATCH', ctx.client.path(live.apiVersion, 'Tenant', undefined, name), {
      body: labelPatch,
      contentType: 'application/merge-patch+json',
    });
  }
  if (errors.length) {
    await ctx.events.record(live, 'Warning', 'ReconcileFailed', errors.join('; '));
    throw new Error(`Tenant ${name}: ${errors.join('; ')}`);
  }
  // Come back when the keep-alive of the personal namespace runs out.
  const left = expiresAt - ctx.now();
  return keep && left > 0 && instanceCount === 0 && !holdsPersonalTemplates(tenant, templateCount) ? { requeueAfterMs: Math.min(left + 1000, 2 ** 31 - 1) } : {};
}

/**
 * Keep-alive of a personal namespace (docs/behaviour.md §5.3 step 5): kept until `lastLogin` + keep-alive, and
 * while it holds Instances, or (e62be9e, §16.4) Templates of the Tenant's personal workspace. A
 * missing lastLogin counts as the zero time.
 */
export function personalNamespaceKeepAlive(tenant: Tenant, instanceCount: number, now: number, keepAliveMs: number, templateCount = 0): { keep: boolean; expiresAt: number } {
  const lastLogin = tenant.spec.lastLogin ? Date.parse(tenant.spec.lastLogin) : 0;
  const expiresAt = (Number.isNaN(lastLogin) ? 0 : lastLogin) + keepAliveMs;
  return { keep: !(now > expiresAt && instanceCount === 0) || holdsPersonalTemplates(tenant, templateCount), expiresAt };
}

/** Whether the personal workspace (e62be9e; absent at 2e8aeb9) keeps the namespace for its Templates. */
function holdsPersonalTemplates(tenant: Tenant, templateCount: number): boolean {
  return tenant.spec.personalWorkspace !== undefined && templateCount > 0;
}

async function deleteTenant(ctx: ControllerContext, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.tenants.get(undefined, name)!;
  if (!(live.metadata.finalizers ?? []).includes(TENANT_FINALIZER)) return {};
  if (ctx.keycloak) {
    const res = await ctx.keycloak.deleteUser(name);
    if (!res.ok) throw new Error(`Tenant ${name} deletion: keycloak: ${formatKeycloakErrors(res.errors)}`);
  }
  await setFinalizer(ctx, live, false);
  return {};
}

/**
 * `keptByLogin`: whether a Tenant's personal namespace is kept by its last login alone (then its
 * first Instance changes nothing; default: never assumed).
 */
export function watchTenants(caches: Caches, enqueue: (key: string) => void, keptByLogin: (tenant: Tenant) => boolean = () => false): void {
  caches.tenants.on((type, obj, old) => {
    if (type === 'delete') caches.dependencies.remove(`Tenant/${obj.metadata.name}`);
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    enqueue(`Tenant/${obj.metadata.name}`);
  });
  // The keep-alive asks only whether the personal namespace holds Instances: its first one
  // created (unless the last login keeps it anyway), or its last one deleted; not every Instance
  // of a burst.
  caches.instances.on((type, obj) => {
    if (type === 'update') return;
    const tenant = (obj.spec as Instance['spec'])['tenant.crownlabs.polito.it/TenantRef']?.name;
    if (!tenant || obj.metadata.namespace !== tenantNamespaceName(tenant)) return;
    const left = caches.instances.byIndex('namespace', obj.metadata.namespace).length;
    if (type === 'delete' ? left > 0 : left > 1) return;
    const cached = caches.inventory.tenants.get(tenant);
    if (type === 'add' && cached && keptByLogin(cached)) return;
    enqueue(`Tenant/${tenant}`);
  });
  // The personal workspace's keep-alive (e62be9e) asks only whether the namespace holds Templates.
  caches.templates.addIndex('namespace', (o) => [o.metadata.namespace ?? '']);
  caches.templates.on((type, obj) => {
    if (type === 'update') return;
    const ns = obj.metadata.namespace ?? '';
    const left = caches.templates.byIndex('namespace', ns).length;
    if (type === 'delete' ? left > 0 : left > 1) return;
    const tenant = [...caches.inventory.tenants.values()].find((t) => tenantNamespaceName(t.metadata.name) === ns && t.spec.personalWorkspace);
    if (tenant) enqueue(`Tenant/${tenant.metadata.name}`);
  });
  // A PV bound to a MyDrive PVC: the Tenant owning that PVC.
  caches.persistentVolumes.on((_t, pv) => {
    const ref = (pv.spec as { claimRef?: { namespace?: string; name?: string } } | undefined)?.claimRef;
    if (!ref?.name) return;
    const pvc = caches.child('v1', 'PersistentVolumeClaim')?.get(ref.namespace, ref.name);
    const parent = pvc?.metadata.annotations?.[COMPOSER.parentAnnotation];
    if (parent?.startsWith('Tenant/')) enqueue(parent);
  });
}
