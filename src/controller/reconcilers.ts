/** The registrations of the controller's reconcilers, one per parent kind, in watch-wiring order. */
import type { Caches } from './caches.ts';
import type { AutomationState } from './automation-state.ts';
import { automationReconcilers } from './instance-automation.ts';
import type { Reconciler } from './reconciler.ts';
import { reconcileInstance, reconcileInstanceStatus, watchInstances } from './reconcile-instance.ts';
import { reconcileSnapshot, watchSnapshots } from './reconcile-snapshot.ts';
import { reconcileSharedVolume, watchSharedVolumes } from './reconcile-shared-volume.ts';
import { personalNamespaceKeepAlive, reconcileTenant, watchTenants } from './reconcile-tenant.ts';
import { reconcileWorkspace, watchWorkspaces } from './reconcile-workspace.ts';
import type { Informer } from '../kube/informer.ts';

export interface PeriodicOptions {
  /** Instances: reconciled again this long after a success, stretched by a random 0–10% (0: never). */
  resyncPeriodMs: number;
  /** Tenants and Workspaces: requeued after a success at a uniform random time in [min, max) (max 0: never). */
  requeueMinMs: number;
  requeueMaxMs: number;
}

const keysOf = (kind: string, inf: Informer) => inf.list().map((o) => (o.metadata.namespace ? `${kind}/${o.metadata.namespace}/${o.metadata.name}` : `${kind}/${o.metadata.name}`));

/**
 * The Instance reconciler. It remembers which Instances converged (their last full reconcile
 * succeeded): only those may take the status-only path on a light run.
 */
export function instanceReconciler(periodic: PeriodicOptions): Reconciler {
  const converged = new Set<string>();
  return {
    kind: 'Instance',
    statusOnly: (req) => req.light && converged.has(req.key),
    async reconcile(ctx, req) {
      try {
        if (req.light && converged.has(req.key)) return await reconcileInstanceStatus(ctx, req.namespace, req.name);
        converged.delete(req.key);
        const result = await reconcileInstance(ctx, req.namespace, req.name);
        if (ctx.caches.instances.get(req.namespace, req.name)) converged.add(req.key);
        return result;
      } catch (e) {
        // The retry (a full add, after a back-off) composes and applies again.
        converged.delete(req.key);
        throw e;
      }
    },
    watches({ caches, enqueue }) {
      watchInstances(caches, enqueue);
      caches.instances.on((type, obj) => {
        if (type === 'delete') converged.delete(`Instance/${obj.metadata.namespace}/${obj.metadata.name}`);
      });
    },
    periodic: (caches, req) => (periodic.resyncPeriodMs > 0 && caches.instances.get(req.namespace, req.name) ? Math.floor(periodic.resyncPeriodMs * (1 + 0.1 * Math.random())) : undefined),
    keys: (caches) => keysOf('Instance', caches.instances),
  };
}

/** Tenants and Workspaces that still exist are requeued at a random time in [min, max). */
function requeue(periodic: PeriodicOptions, inf: (caches: Caches) => Informer) {
  const max = Math.max(periodic.requeueMinMs, periodic.requeueMaxMs);
  return (caches: Caches, req: { name: string }) => (max > 0 && inf(caches).get(undefined, req.name) ? Math.floor(periodic.requeueMinMs + Math.random() * (max - periodic.requeueMinMs)) : undefined);
}

export function tenantReconciler(periodic: PeriodicOptions): Reconciler {
  return {
    kind: 'Tenant',
    reconcile: (ctx, req) => reconcileTenant(ctx, req.name),
    watches: ({ ctx, caches, enqueue }) => watchTenants(caches, enqueue, (t) => personalNamespaceKeepAlive(t, 0, ctx.now(), ctx.tenantNsKeepAliveMs).keep),
    periodic: requeue(periodic, (c) => c.tenants),
    keys: (caches) => keysOf('Tenant', caches.tenants),
  };
}

export function workspaceReconciler(periodic: PeriodicOptions): Reconciler {
  return {
    kind: 'Workspace',
    reconcile: (ctx, req) => reconcileWorkspace(ctx, req.name),
    watches: ({ caches, enqueue }) => watchWorkspaces(caches, enqueue),
    periodic: requeue(periodic, (c) => c.workspaces),
    keys: (caches) => keysOf('Workspace', caches.workspaces),
  };
}

export const snapshotReconciler: Reconciler = {
  kind: 'InstanceSnapshot',
  reconcile: (ctx, req) => reconcileSnapshot(ctx, req.namespace, req.name),
  watches: ({ caches, enqueue }) => watchSnapshots(caches, enqueue),
  keys: (caches) => keysOf('InstanceSnapshot', caches.snapshots),
};

/** At the API levels without the kind there is no informer, so no key. */
export const sharedVolumeReconciler: Reconciler = {
  kind: 'SharedVolume',
  reconcile: (ctx, req) => reconcileSharedVolume(ctx, req.namespace, req.name),
  watches: ({ caches, enqueue }) => watchSharedVolumes(caches, enqueue),
  keys: (caches) => (caches.sharedVolumes ? keysOf('SharedVolume', caches.sharedVolumes) : []),
};

/** Every reconciler of the controller, in the order their watches are wired (Instance first: its indexes serve the automation). */
export function controllerReconcilers(periodic: PeriodicOptions, automation: AutomationState): Reconciler[] {
  return [instanceReconciler(periodic), ...automationReconcilers(automation), tenantReconciler(periodic), workspaceReconciler(periodic), snapshotReconciler, sharedVolumeReconciler];
}
