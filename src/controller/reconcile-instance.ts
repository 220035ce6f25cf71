/**
 * Instance reconciler (docs/behaviour.md §7): own labels, prettyName and the frozen Template spec on the
 * Instance, then compose → apply → prune of its set, then status (phase, url, ip).
 *
 * Watches (wired by `watchInstances`): Instances (spec/metadata changes, not status), and Templates,
 * Tenants, Namespaces and `mydrive-info` Secrets, fanned out through `caches.dependencies` to the
 * Instances whose last reconcile looked them up; children map to the Instance by label.
 */
import { myDriveShare } from './mydrive-share.ts';
import { instanceChanged, metadataOrSpecChanged, whitelisted } from './predicates.ts';
import { RecordedLookups } from '../inputs/lookups.ts';
import type { ApiLevel } from '../inputs/api-level.ts';
import { TEMPLATE_REF, TENANT_REF, type Instance, type InstancePhase, type Template, type Tenant } from '../inputs/types.ts';
import { compose, renderUnit } from '../compose/compose.ts';
import { enrolmentProblem } from '../model/enrolment.ts';
import { effectiveEnvironments, FROZEN_TEMPLATE_ANNOTATION, instanceOwnLabels, observedMacAddress, planInstance, type InstancePlan } from '../model/instance-plan.ts';
import { parentId, parentKey, type ParentRef } from '../model/labels.ts';
import { heldIngresses, HTTP_ROUTE_API_VERSION, httpRouteAccepted, type RouteState } from '../model/exposition.ts';
import { goDuration } from '../model/duration.ts';
import {
  deploymentPhase,
  environmentIp,
  instancePlacement,
  PHASE_RULES,
  podPlacement,
  virtualMachineInstancePhase,
  vmiPlacement,
  type Placement,
  type PodState,
  type ServiceState,
} from '../model/phase.ts';
import type { ApiAccess } from '../kube/resources.ts';
import { applySet } from './apply-set.ts';
import type { WorkloadState } from './headless-pods.ts';
import { writeInstanceStatus } from './status-writes.ts';
import type { InstanceStatusFacts } from '../model/status-shape.ts';
import type { Caches } from './caches.ts';
import type { ControllerContext, ReconcileResult } from './context.ts';
import { newerResourceVersion, type CachedObject } from '../kube/informer.ts';
import { enqueueDependents } from './dependents.ts';
import { instanceMetadataPatch } from './parent-patches.ts';
import { releasedWorkloads } from './released-workloads.ts';
import { deleteObject } from '../kube/objects.ts';
import { failedValidation } from './terminal-error.ts';
import { ALLOCATION_FAILED } from '../model/public-exposure.ts';
import { PUBLIC_EXPOSURE_RETRY_MS, decidePublicExposure, publicExposureApplied, publicExposureStatus, releasePublicExposure } from './public-exposure-status.ts';

export async function reconcileInstance(ctx: ControllerContext, namespace: string, name: string): Promise<ReconcileResult> {
  const parent: ParentRef = { kind: 'Instance', name, namespace };
  const own = parentKey(parent);
  const dependencies = ctx.caches.dependencies;
  let live = ctx.caches.instances.get(namespace, name);
  if (!live || live.metadata.deletionTimestamp) {
    dependencies.remove(own);
    releasePublicExposure(ctx, namespace, name);
    return {}; // children are garbage-collected
  }
  const inv = ctx.caches.inventory;
  let instance = inv.instances.get(`${namespace}/${name}`);
  if (!instance) {
    dependencies.remove(own); // only its own change can fix it
    throw failedValidation(ctx.caches, live);
  }
  // What this reconcile looks up goes into the index at once, before any await: a Template created
  // after the lookup finds the Instance there, even when the reconcile stops before composing.
  const reads = new RecordedLookups(inv, own);
  // docs/behaviour.md §0.6: an Instance outside the whitelisted namespaces is not this controller's business.
  reads.note(`Namespace/${namespace}`); // whitelisted() reads its labels
  if (!whitelisted(ctx, namespace)) {
    dependencies.set(own, reads.keys);
    return {};
  }

  const template = reads.templateOf(instance);
  const tenant = reads.tenantOf(instance);
  dependencies.set(own, reads.keys);
  if (!template || !tenant) {
    const tref = instance.spec[TEMPLATE_REF];
    const [reason, message] = !template
      ? ['TemplateNotFound', `Template ${tref.namespace}/${tref.name} not found`]
      : ['TenantNotFound', `Tenant ${instance.spec[TENANT_REF].name} not found`];
    await ctx.events.record(live, 'Warning', reason, message);
    await writeInstanceStatus(ctx, live, failedStatus(instance, undefined));
    throw new Error(message);
  }
  // docs/behaviour.md §7.2 step 4: before anything is written on the Instance (the frozen Template
  // spec would show its Tenant a Template RBAC hides from her). Fixed by an enrolment: the Tenant's
  // change re-runs this through the dependency index.
  const notEnrolled = enrolmentProblem(tenant, template);
  if (notEnrolled) {
    await ctx.events.record(live, 'Warning', 'TenantNotEnrolled', notEnrolled);
    await writeInstanceStatus(ctx, live, failedStatus(instance, undefined));
    throw new Error(`Instance ${namespace}/${name}: ${notEnrolled}`);
  }

  // The Instance's own metadata: labels, prettyName, and the Template spec it is created from.
  const patch = instanceMetadataPatch(instance, template, live.metadata.uid ?? `${namespace}/${name}`, inv.level);
  if (patch) {
    // Compose from what the server now holds; its watch event (the echo) does not requeue us,
    // even when it comes before the answer.
    const updated = await ctx.caches.write(live, () =>
      ctx.client.request<CachedObject>('PATCH', ctx.client.path(live!.apiVersion, 'Instance', namespace, name), {
        body: patch,
        contentType: 'application/merge-patch+json',
      }),
    );
    live = ctx.caches.instances.get(namespace, name) ?? live;
    const known = inv.instances.get(`${namespace}/${name}`);
    // Deleted or made invalid meanwhile: that event requeued us, and the next run reads it.
    if (!known) return {};
    // Someone else's change that came before the answer is in the Inventory already, and newer
    // than the answer: compose from it, and do not write our older copy over it.
    if (newerResourceVersion(known.metadata.resourceVersion ?? '', updated.metadata.resourceVersion ?? '')) instance = known;
    else {
      instance = { ...instance, metadata: { ...instance.metadata, ...updated.metadata }, spec: { ...instance.spec, ...(patch.spec ?? {}) } } as Instance;
      inv.upsert(instance, inv.sourceOf(known));
    }
  }

  const key = `${namespace}/${name}`;
  // The share of the bound PV (the status-only path derives its plan with the same resolver).
  const share = (t: Tenant) => myDriveShare(ctx, t);
  const publicExposure = decidePublicExposure(ctx, instance, template);
  const composition = compose(inv, ctx.config, { parent: { kind: 'Instance', namespace, name }, myDriveShare: share, vmMacAddress: (ns, vm) => liveMacAddress(ctx, ns, vm), publicExposure });
  dependencies.set(own, [...reads.keys, ...(composition.dependencies.get(own) ?? [])]);
  const unit = composition.units[0];
  if (!unit) {
    const message = composition.problems.map((p) => p.message).join('; ') || 'nothing to render';
    await ctx.events.record(live, 'Warning', 'EnvironmentEnforcementFailed', message);
    await writeInstanceStatus(ctx, live, failedStatus(instance, template));
    throw new Error(`Instance ${key}: ${message}`);
  }
  const rendered = renderUnit(unit);
  const held = heldIngresses(rendered, unit.plan?.gateway);
  const keep = (child: CachedObject, after: ReadonlyMap<string, Record<string, unknown>>) =>
    held(child, (route) => (after.get(`HTTPRoute/${namespace}/${route}`) ?? cachedChild(ctx, HTTP_ROUTE_API_VERSION, 'HTTPRoute', namespace, route)) as RouteState | undefined);
  const outcome = await applySet(ctx, parent, live, rendered, keep);
  if (outcome.errors.length) {
    const message = outcome.errors.map((e) => `${e.object}: ${e.error.message}`).join('; ');
    await ctx.events.record(live, 'Warning', 'EnvironmentEnforcementFailed', message.slice(0, 1000));
    await writeInstanceStatus(ctx, live, failedStatus(instance, template));
    throw new Error(`Instance ${key}: ${message}`);
  }
  // The plan the set was built from (compose derived it: not derived a second time).
  const plan = unit.plan;
  if (!plan) throw new Error(`Instance ${key}: composed without a plan`);
  // Only the VMI of this very Instance (uid precondition): a namesake made since answers 409.
  for (const vmi of releasedWorkloads(ctx.caches, plan, live)) {
    if (await deleteObject(ctx.client, vmi.apiVersion, vmi.kind, namespace, vmi.metadata.name, vmi.metadata.uid)) {
      ctx.caches.informerOf(vmi.apiVersion, vmi.kind)?.noteDeleted(namespace, vmi.metadata.name);
      ctx.metrics.prunes.inc({ kind: vmi.kind });
      outcome.live.delete(`${vmi.kind}/${namespace}/${vmi.metadata.name}`);
    }
  }
  // The children as the apply left them: the server's answers (a Deployment created a moment ago
  // is `Starting`, as upstream derives it from its create answer, not "" for want of a cached copy),
  // else the cache (e.g. the VMI KubeVirt makes for a persistent VM); a pruned one is gone.
  const afterApply: ChildLookup = (apiVersion, kind, child) => outcome.live.get(`${kind}/${namespace}/${child}`) ?? cachedChild(ctx, apiVersion, kind, namespace, child);
  if (plan.publicExposure?.state === 'refused') await ctx.events.record(live, 'Warning', plan.publicExposure.reason, plan.publicExposure.message);
  await writeInstanceStatus(ctx, live, instanceStatus(ctx, live, plan, afterApply, await headlessServicePods(ctx, namespace, plan, afterApply)));
  // Ports another Instance leaves are not an event of this one: look again later.
  return plan.publicExposure?.state === 'refused' && plan.publicExposure.reason === ALLOCATION_FAILED ? { requeueAfterMs: PUBLIC_EXPOSURE_RETRY_MS } : {};
}

/**
 * The status-only path: only a child's status changed (a Deployment became available, a VMI got
 * its IP), so the Instance's status is derived again from the cached children, without composing
 * or applying its set. The caller runs it only after a successful full reconcile of the Instance
 * and while no input or child spec change is pending (WorkQueue's light runs); anything unusual
 * (the Instance's own metadata not yet written, no plan) falls back to the full reconcile.
 */
export async function reconcileInstanceStatus(ctx: ControllerContext, namespace: string, name: string): Promise<ReconcileResult> {
  const live = ctx.caches.instances.get(namespace, name);
  if (!live || live.metadata.deletionTimestamp || !whitelisted(ctx, namespace)) return {};
  const inv = ctx.caches.inventory;
  const instance = inv.instances.get(`${namespace}/${name}`);
  const template = instance && inv.templateOf(instance);
  if (!instance || !template || !ownMetadataWritten(instance, template, inv.level)) return reconcileInstance(ctx, namespace, name);
  const { plan } = planInstance(instance, inv, ctx.config, (t: Tenant) => myDriveShare(ctx, t), { vmMacAddress: (ns, vm) => liveMacAddress(ctx, ns, vm), publicExposure: decidePublicExposure(ctx, instance, template) });
  // A VMI that just reported the MAC its VM must keep: the VM is applied again (a full reconcile).
  if (plan && plan.environments.some((e) => e.macAddress && observedMacAddress(cachedChild(ctx, 'kubevirt.io/v1', 'VirtualMachine', namespace, e.name), undefined) !== e.macAddress)) {
    return reconcileInstance(ctx, namespace, name);
  }
  if (!plan) return reconcileInstance(ctx, namespace, name);
  // The allocation moved (a collision seen only now): the Service must be applied, not only the status.
  if (plan.publicExposure?.state === 'allocated' && !publicExposureApplied(plan, cachedChild(ctx, 'v1', 'Service', namespace, plan.publicExposure.serviceName), ctx.config.publicExposureLoadbalancerIpsKey)) {
    return reconcileInstance(ctx, namespace, name);
  }
  // An Ingress left while its HTTPRoute was not Accepted: the route's status may let it go (a prune).
  if (!plan.exposure.ingress && ctx.caches.child('networking.k8s.io/v1', 'Ingress')?.byParentId(parentId({ kind: 'Instance', namespace, name })).length) return reconcileInstance(ctx, namespace, name);
  const cached: ChildLookup = (apiVersion, kind, child) => cachedChild(ctx, apiVersion, kind, namespace, child);
  await writeInstanceStatus(ctx, live, instanceStatus(ctx, live, plan, cached, await headlessServicePods(ctx, namespace, plan, cached)));
  return {};
}

/** Whether the Instance already holds its own labels, prettyName and frozen Template spec (the full reconcile's first write). */
function ownMetadataWritten(instance: Instance, template: Template, level: ApiLevel): boolean {
  if (!instance.spec.prettyName || !instance.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION]) return false;
  return Object.entries(instanceOwnLabels(instance, template, level)).every(([k, v]) => instance.metadata.labels?.[k] === v);
}

type ChildLookup = (apiVersion: string, kind: string, name: string) => Record<string, unknown> | undefined;

/**
 * Listing the Pods a headless Service selects: its environment's IP (docs/behaviour.md §16.3). Only
 * e62be9e renders headless Services (src/model/level-rendering.ts), so only its install grants it.
 */
export const HEADLESS_IP_API_ACCESS: Readonly<Record<ApiLevel, readonly ApiAccess[]>> = {
  '2e8aeb9': [],
  e62be9e: [{ apiVersion: 'v1', kind: 'Pod', verbs: ['list'] }],
};

/**
 * The Pods each environment's headless Service selects, by environment (child) name. A Service
 * with a cluster IP needs none, so only e62be9e's headless Services cost a request, and only when
 * the Deployment or VMI that owns them moved (src/controller/headless-pods.ts).
 */
async function headlessServicePods(ctx: ControllerContext, namespace: string, plan: InstancePlan, childOf: ChildLookup): Promise<Map<string, PodState[]>> {
  const out = new Map<string, PodState[]>();
  for (const env of plan.environments) {
    const spec = (childOf('v1', 'Service', env.name)?.spec ?? {}) as { clusterIP?: string; selector?: Record<string, string> };
    const selector = Object.entries(spec.selector ?? {});
    if (spec.clusterIP !== 'None' || selector.length === 0) continue;
    const labelSelector = selector.map(([k, v]) => `${k}=${v}`).join(',');
    const workload = env.isVM ? childOf('kubevirt.io/v1', 'VirtualMachineInstance', env.name) : childOf('apps/v1', 'Deployment', env.name);
    const list = async () => (await ctx.client.request<{ items: PodState[] }>('GET', ctx.client.path('v1', 'Pod', namespace), { query: { labelSelector } })).items;
    out.set(env.name, await ctx.caches.headlessPods.pods(`${namespace}/${plan.instance.metadata.name}`, env.name, workload as WorkloadState | undefined, list));
  }
  return out;
}

/** The MAC address the live VM `name` keeps, or its VMI reports (docs/behaviour.md §16.3). */
function liveMacAddress(ctx: ControllerContext, namespace: string, name: string): string | undefined {
  return observedMacAddress(cachedChild(ctx, 'kubevirt.io/v1', 'VirtualMachine', namespace, name), cachedChild(ctx, 'kubevirt.io/v1', 'VirtualMachineInstance', namespace, name));
}

function cachedChild(ctx: ControllerContext, apiVersion: string, kind: string, namespace: string, name: string): Record<string, unknown> | undefined {
  return ctx.caches.child(apiVersion, kind)?.get(namespace, name);
}

/**
 * e62be9e's `expositionAccepted`: the environment's GUI route serves. An Ingress counts as
 * accepted (as upstream's Ingress mode); an HTTPRoute alone once its Gateway accepted it.
 */
function expositionAccepted(plan: InstancePlan, env: InstancePlan['environments'][number], childOf: ChildLookup): boolean {
  if (!env.url || !env.route) return false;
  if (plan.exposure.ingress) return true;
  return !!plan.gateway && httpRouteAccepted(childOf(HTTP_ROUTE_API_VERSION, 'HTTPRoute', env.route.ingressName) as RouteState | undefined, plan.gateway);
}

/**
 * The status of a failed reconcile: every environment `CreationLoopBackoff`. Once the environments
 * are being enforced (`template` given) they are named from it, as upstream names the entries
 * before enforcing them; before, the entries held. The level says what the Instance's phase is
 * then (src/model/status-shape.ts).
 */
function failedStatus(instance: Instance, template: Template | undefined): InstanceStatusFacts {
  const envs = template ? effectiveEnvironments(instance, template) : [];
  return envs.length ? { environments: envs.map((e) => ({ name: e.name, phase: 'CreationLoopBackoff' })) } : { phase: 'CreationLoopBackoff' };
}

/** The status an Instance's plan and children give (docs/behaviour.md §7.2 steps 6–7, §16.2). */
function instanceStatus(ctx: ControllerContext, live: CachedObject, plan: InstancePlan, childOf: ChildLookup, pods: ReadonlyMap<string, PodState[]>): InstanceStatusFacts {
  const rules = PHASE_RULES[ctx.caches.inventory.level];
  const placements: (Placement | undefined)[] = [];
  const environments = plan.environments.map((env) => {
    const get = (apiVersion: string, kind: string) => childOf(apiVersion, kind, env.name) as never;
    const service = childOf('v1', 'Service', env.name) as ServiceState | undefined;
    let phase: InstancePhase;
    if (env.isVM) {
      const vmi = get('kubevirt.io/v1', 'VirtualMachineInstance');
      phase = env.persistent ? rules.virtualMachine(get('kubevirt.io/v1', 'VirtualMachine'), vmi) : virtualMachineInstancePhase(vmi, plan.running);
      placements.push(vmiPlacement(vmi));
    } else {
      phase = deploymentPhase(get('apps/v1', 'Deployment'), plan.running, env.persistent);
      placements.push(podPlacement(service, pods.get(env.name) ?? []));
    }
    const ip = environmentIp(service, pods.get(env.name) ?? []);
    // Children are named per environment (env.name); the status entry by the Template's environment name.
    return { name: env.env.name, phase, ip: ip || undefined, expositionAccepted: expositionAccepted(plan, env, childOf) };
  });
  // Empty fields are left out, and removed when they become empty (see `statusPatch`).
  const status: InstanceStatusFacts = { url: plan.url || undefined, environments, ...instancePlacement(plan.running, placements) };
  status.publicExposure = publicExposureStatus(plan, plan.publicExposure?.state === 'allocated' ? childOf('v1', 'Service', plan.publicExposure.serviceName) : undefined);
  // docs/behaviour.md §7.2 step 7: the time from creation to the first Ready, as a Go duration string.
  if (live.metadata.creationTimestamp) status.age = goDuration(Math.max(0, Math.floor((ctx.now() - Date.parse(String(live.metadata.creationTimestamp))) / 1000)) * 1000);
  return status;
}

/**
 * Keys of the Instances a change of an input object concerns: the Instance itself, and through the
 * dependency index those whose last reconcile looked up the Template, Tenant (as owner, or as a
 * manager of the workspace), Namespace or `mydrive-info` Secret. The index fills as reconciles run:
 * every Instance is enqueued by its informer's add event and, until that reconcile looks its inputs
 * up, a change of them needs no fan-out (the reconcile reads them as they are then).
 */
export function watchInstances(caches: Caches, enqueue: (key: string) => void): void {
  const instanceKey = (o: { metadata: { namespace?: string; name: string } }) => `Instance/${o.metadata.namespace}/${o.metadata.name}`;
  const spec = (o: CachedObject) => (o.spec ?? {}) as Partial<Instance['spec']>;
  // Spec indexes that stay for the other reconcilers, which do not compose: the automation's
  // expiration follows a Template's deleteAfter, the Tenant's keep-alive and the automation count
  // the Instances of a namespace. The Instance fan-out below reads the dependency index only.
  caches.instances.addIndex('template', (o) => {
    const ref = spec(o)[TEMPLATE_REF];
    return ref?.name ? [`${ref.namespace ?? ''}/${ref.name}`] : [];
  });
  caches.instances.addIndex('namespace', (o) => [o.metadata.namespace ?? '']);
  caches.instances.on((type, obj, old, own) => {
    if (type === 'delete') {
      caches.dependencies.remove(instanceKey(obj));
      caches.headlessPods.forget(`${obj.metadata.namespace}/${obj.metadata.name}`);
    }
    // `own`: the echo of this reconciler's own label patch, already composed from.
    if (own || (type === 'update' && old && !instanceChanged(obj, old))) return;
    enqueue(instanceKey(obj));
  });
  const fanOut = (kind: string) => (obj: CachedObject, old: CachedObject | undefined) => enqueueDependents(caches, kind, obj, old, 'Instance', enqueue);
  const template = fanOut('Template');
  caches.templates.on((type, obj, old) => {
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    template(obj, old);
  });
  const tenant = fanOut('Tenant');
  caches.tenants.on((type, obj, old) => {
    if (type === 'update' && old && !metadataOrSpecChanged(obj, old)) return;
    tenant(obj, old);
  });
  const namespace = fanOut('Namespace');
  caches.namespaces.on((type, obj, old) => {
    if (type === 'update' && old && JSON.stringify(old.metadata.labels) === JSON.stringify(obj.metadata.labels)) return;
    namespace(obj, old);
  });
  const secret = fanOut('Secret');
  caches.mydriveSecrets.on((_t, obj, old) => secret(obj, old));
}
