/**
 * The least-privilege RBAC of each component, derived from what the code does rather than listed
 * by hand, so that a new informer, a new rendered kind or a new parent kind flows in by itself:
 *
 * - rendered kinds: the representative inputs (every environment type and mode, tenants,
 *   workspaces) composed under the configuration (its auth mode) → `create` + `patch`
 *   (server-side apply may create); every kind a set renders under any configuration → `delete` (prune);
 * - informers: every informer `Caches` builds → `list` + `watch`;
 * - parent kinds of the resource sets (Workspace, Tenant, Instance): `patch` of their metadata
 *   (labels, finalizer, frozen Template) and of `<plural>/status`, and `update` of
 *   `<plural>/finalizers` (owner references with blockOwnerDeletion need it);
 * - access a reconciler declares next to its requests (`*_API_ACCESS`: snapshots and the CRDs'
 *   API level always, each instance automation of `platformInstanceAutomation`);
 * - Events: `create`; leader election: a Role on its Lease; TokenReviews and SubjectAccessReviews
 *   `create` for its authenticated /metrics;
 * - RBAC the composition renders: the API server lets us grant only what we hold, so the rules
 *   of every rendered (Cluster)Role are added (names dropped: they name each tenant), and the
 *   ClusterRoles we bind without rendering them (docs/behaviour.md §3 shared roles) get `bind` by name unless
 *   we already hold every permission they grant.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { SharedClusterRoles } from '../../constructs/platform/shared-cluster-roles.ts';
import { INPUT_KINDS, type InputKind } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { Caches } from '../controller/caches.ts';
import { KubeClient } from '../kube/client.ts';
import { AUTOMATION_API_ACCESS } from '../controller/instance-automation.ts';
import { SNAPSHOT_API_ACCESS } from '../controller/reconcile-snapshot.ts';
import { API_LEVEL_API_ACCESS } from '../controller/api-level-watch.ts';
import { HEADLESS_IP_API_ACCESS } from '../controller/reconcile-instance.ts';
import { METRICS_AUTH_API_ACCESS } from '../controller/metrics-auth.ts';
import { INSTANCE_QUOTA_API_ACCESS, INSTANCE_QUOTA_LEDGER_ACCESS } from '../webhooks/instance-quota.ts';
import { webhookExistsAt, type ApiLevel } from '../inputs/api-level.ts';
import { KIND_RESOURCES, type ApiAccess } from '../kube/resources.ts';
import { TENANTS } from '../bastion/tenant-watch.ts';
import { renderedKinds, representativeObjects } from '../compose/representative-lab.ts';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

/** Verbs in the order kubectl prints them. */
const VERB_ORDER = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection', 'bind', 'escalate'];

/** Collects verbs per (group, resource, resourceNames); one rule each, in a stable order. */
class RuleSet {
  private readonly rules = new Map<string, { group: string; resource: string; names?: string[]; verbs: Set<string> }>();
  add(group: string, resource: string, verbs: readonly string[], names?: string[]): void {
    const key = `${group}|${resource}|${names?.join(',') ?? ''}`;
    let r = this.rules.get(key);
    if (!r) this.rules.set(key, (r = { group, resource, names, verbs: new Set() }));
    for (const v of verbs) r.verbs.add(v);
  }
  /** Whether a rule without resource names grants `verb` on `group`/`resource`. */
  covers(group: string, resource: string, verb: string): boolean {
    return this.rules.get(`${group}|${resource}|`)?.verbs.has(verb) ?? false;
  }
  toRules(): PolicyRule[] {
    return [...this.rules.values()]
      .sort((a, b) => a.group.localeCompare(b.group) || a.resource.localeCompare(b.resource) || (a.names?.join() ?? '').localeCompare(b.names?.join() ?? ''))
      .map((r) => ({
        apiGroups: [r.group],
        resources: [r.resource],
        verbs: [...r.verbs].sort((x, y) => VERB_ORDER.indexOf(x) - VERB_ORDER.indexOf(y)),
        ...(r.names ? { resourceNames: r.names } : {}),
      }));
  }
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
}

function pluralOf(apiVersion: string, kind: string): string {
  const r = KIND_RESOURCES[`${apiVersion}/${kind}`];
  if (!r) throw new Error(`the composition emits ${apiVersion} ${kind}, unknown to src/kube/resources.ts`);
  return r.plural;
}

/** The rules of the shared ClusterRoles (docs/behaviour.md §3) by name, as our own construct renders them. */
function sharedClusterRoleRules(): Map<string, PolicyRule[]> {
  const chart = new Chart(new App(), 'shared');
  new SharedClusterRoles(chart, 'roles', { sharedVolumes: true });
  return new Map(chart.toJson().map((o) => [o.metadata.name as string, (o.rules ?? []) as PolicyRule[]]));
}

/** apiVersion/kind of every informer the controller starts (its own registry, `Caches`). */
export function informerKinds(level?: ApiLevel): { apiVersion: string; kind: string }[] {
  const kc = new KubeConfig();
  // Never contacted: the informers are built, not started.
  kc.loadFromOptions({
    clusters: [{ name: 'none', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'none' }],
    contexts: [{ name: 'none', cluster: 'none', user: 'none' }],
    currentContext: 'none',
  });
  const caches = new Caches(new KubeClient(kc), { level });
  return caches.all.map((i) => ({ apiVersion: i.options.apiVersion, kind: i.options.kind }));
}

export interface ControllerRbac {
  /** Cluster-wide rules of the controller's ClusterRole. */
  clusterRules: PolicyRule[];
  /** Rules of its Role in the leader-election namespace. */
  leaseRules: PolicyRule[];
}

export function deriveControllerRbac(config: ComposerConfig, leaseNames: string[]): ControllerRbac {
  const rules = new RuleSet();
  const { objects, parentKinds } = representativeObjects(config);
  const emittedRoles = new Set<string>();
  // Every kind a set can render is pruned, whatever this configuration renders: what an earlier
  // configuration rendered (the other auth mode's oauth2-proxies) goes too.
  for (const { apiVersion, kind } of renderedKinds()) rules.add(groupOf(apiVersion), pluralOf(apiVersion, kind), ['delete']);
  for (const o of objects) {
    const plural = pluralOf(o.apiVersion, o.kind);
    rules.add(groupOf(o.apiVersion), plural, ['create', 'patch']);
    if (o.kind === 'ClusterRole' || o.kind === 'Role') {
      emittedRoles.add(`${o.kind}/${o.metadata.name}`);
      for (const r of (o as { rules?: PolicyRule[] }).rules ?? []) {
        for (const g of r.apiGroups ?? ['']) for (const res of r.resources ?? []) rules.add(g, res, r.verbs);
      }
    }
  }
  const bound = new Map<string, { kind: string; name: string }>();
  for (const o of objects) {
    const ref = (o as { roleRef?: { kind: string; name: string } }).roleRef;
    if (ref && !emittedRoles.has(`${ref.kind}/${ref.name}`)) bound.set(`${ref.kind}/${ref.name}`, ref);
  }
  for (const { apiVersion, kind } of informerKinds(config.apiLevel)) rules.add(groupOf(apiVersion), pluralOf(apiVersion, kind), ['list', 'watch']);
  for (const kind of parentKinds) {
    const { apiVersion, plural } = INPUT_KINDS[kind as InputKind];
    // Snapshots get no metadata patch (no labels, finalizer or frozen Template of their own).
    if (kind !== 'InstanceSnapshot') rules.add(groupOf(apiVersion), plural, ['patch']);
    rules.add(groupOf(apiVersion), `${plural}/status`, ['patch']);
    rules.add(groupOf(apiVersion), `${plural}/finalizers`, ['update']);
  }
  const quotaWebhook = webhookExistsAt('instance-quota', config.apiLevel);
  const declared: ApiAccess[] = [...SNAPSHOT_API_ACCESS, ...API_LEVEL_API_ACCESS, ...HEADLESS_IP_API_ACCESS[config.apiLevel], ...(quotaWebhook ? INSTANCE_QUOTA_API_ACCESS : [])];
  for (const name of config.platformInstanceAutomation) declared.push(...AUTOMATION_API_ACCESS[name as keyof typeof AUTOMATION_API_ACCESS]);
  for (const a of declared) rules.add(groupOf(a.apiVersion), `${pluralOf(a.apiVersion, a.kind)}${a.subresource ? `/${a.subresource}` : ''}`, a.verbs);
  rules.add('', 'events', ['create']);
  // /metrics behind authentication (the rendered Deployment passes --metrics-secure).
  for (const a of METRICS_AUTH_API_ACCESS) rules.add(a.group, a.resource, a.verbs);
  // The API server lets us bind a role whose every permission we hold; only the others need `bind`.
  const shared = sharedClusterRoleRules();
  for (const ref of bound.values()) {
    const held = ref.kind === 'ClusterRole' && shared.get(ref.name)?.every((r) => r.apiGroups.every((g) => r.resources.every((res) => r.verbs.every((v) => rules.covers(g, res, v)))));
    if (!held) rules.add('rbac.authorization.k8s.io', ref.kind === 'Role' ? 'roles' : 'clusterroles', ['bind'], [ref.name]);
  }
  return {
    clusterRules: rules.toRules(),
    leaseRules: [
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: [...leaseNames] },
      ...(quotaWebhook ? INSTANCE_QUOTA_LEDGER_ACCESS.map((a) => ({ apiGroups: [groupOf(a.apiVersion)], resources: [pluralOf(a.apiVersion, a.kind)], verbs: [...a.verbs] })) : []),
    ],
  };
}

/** The bastion's keys sidecar: what its Tenant watch does (list, then watch). */
export function deriveBastionRules(): PolicyRule[] {
  return [{ apiGroups: [TENANTS.group], resources: [TENANTS.plural], verbs: [...TENANTS.verbs] }];
}

/**
 * The image-list updater server-side applies one ImageList: `create` (a missing object; it cannot
 * be limited by name) and `patch` of that name.
 */
export function deriveImageListRules(imageListName: string): PolicyRule[] {
  const { apiVersion, plural } = INPUT_KINDS.ImageList;
  return [
    { apiGroups: [groupOf(apiVersion)], resources: [plural], verbs: ['create'] },
    { apiGroups: [groupOf(apiVersion)], resources: [plural], verbs: ['patch'], resourceNames: [imageListName] },
  ];
}
