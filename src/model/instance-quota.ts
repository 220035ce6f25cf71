/**
 * The per-workspace Instance quota of e62be9e (upstream operators/docs/resource-quota.md; docs/behaviour.md §16.6): what a set of running
 * Instances uses, and whether one more fits a workspace's quota and the tenant's. Pure: the
 * Instance webhook (src/webhooks/instance-quota.ts) reads the objects and keeps the ledger.
 */
import type { Environment, GenericRef, ResourceQuotaSpec, Template, WorkspaceResourceQuota } from '../inputs/types.ts';
import { addQuantities, compareQuantities, formatQuantity, parseQuantity, type Quantity } from '../inputs/quantity.ts';
import type { QuotaValues } from './tenant-plan.ts';

/** The workspace name of a tenant's own Templates (upstream's personal workspace). */
export const PERSONAL_WORKSPACE = 'personal';
const WORKSPACE_NAMESPACE_PREFIX = 'workspace-';

/** What Instances use: a count and the summed resources of their Templates' environments. */
export interface Usage {
  instances: number;
  /** Whole cores. */
  cpu: bigint;
  memory: Quantity;
  disk: Quantity;
  other: ReadonlyMap<string, Quantity>;
}

export function emptyUsage(): Usage {
  return { instances: 0, cpu: 0n, memory: parseQuantity(0), disk: parseQuantity(0), other: new Map() };
}

/** One Instance of a Template: its environments' resources, counted once. */
export function templateUsage(template: Pick<Template, 'spec'>): Usage {
  return template.spec.environmentList.reduce((u: Usage, env: Environment) => {
    const r = env.resources;
    const other = new Map(u.other);
    for (const [k, v] of Object.entries(r.otherResources ?? {})) other.set(k, other.has(k) ? addQuantities(other.get(k)!, v) : parseQuantity(v));
    return {
      instances: 1,
      cpu: u.cpu + BigInt(r.cpu),
      memory: addQuantities(u.memory, parseQuantity(r.memory)),
      disk: r.disk === undefined ? u.disk : addQuantities(u.disk, parseQuantity(r.disk)),
      other,
    };
  }, emptyUsage());
}

export function addUsage(a: Usage, b: Usage): Usage {
  const other = new Map(a.other);
  for (const [k, v] of b.other) other.set(k, other.has(k) ? addQuantities(other.get(k)!, v) : v);
  return { instances: a.instances + b.instances, cpu: a.cpu + b.cpu, memory: addQuantities(a.memory, b.memory), disk: addQuantities(a.disk, b.disk), other };
}

/**
 * The workspace an Instance counts against: its Template's namespace (`workspace-<name>`, or the
 * tenant's own namespace for the personal workspace). **Here** neither the Instance's workspace
 * label nor the Template's workspaceRef decides, since the Instance's or the Template's writer
 * sets them; undefined when the Template lies in neither kind of namespace.
 */
export function workspaceOfTemplate(templateRef: GenericRef, instanceNamespace: string): string | undefined {
  const ns = templateRef.namespace ?? instanceNamespace;
  if (ns === instanceNamespace) return PERSONAL_WORKSPACE;
  return ns.startsWith(WORKSPACE_NAMESPACE_PREFIX) && ns.length > WORKSPACE_NAMESPACE_PREFIX.length ? ns.slice(WORKSPACE_NAMESPACE_PREFIX.length) : undefined;
}

/** A limit per resource; a zero cpu, memory, disk or instances limit means none, an absent other resource a limit of zero. */
export interface QuotaLimit {
  instances: number;
  cpu: Quantity;
  memory: Quantity;
  disk: Quantity;
  other: ReadonlyMap<string, Quantity>;
}

/** A Workspace's quota, or a Tenant's personal workspace. */
export function workspaceLimit(quota: WorkspaceResourceQuota | ResourceQuotaSpec): QuotaLimit {
  return {
    instances: quota.instances,
    cpu: parseQuantity(quota.cpu),
    memory: parseQuantity(quota.memory),
    disk: parseQuantity(quota.disk ?? 0),
    other: new Map(Object.entries(quota.otherResources ?? {}).map(([k, v]) => [k, parseQuantity(v)])),
  };
}

/** The tenant's managed quota (tenantQuota at e62be9e), the sum over its workspaces with the caps applied. */
export function tenantLimit(values: QuotaValues): QuotaLimit {
  return workspaceLimit({ instances: values.instances, cpu: values.cpu, memory: values.memory, disk: values.storage, otherResources: values.other });
}

/** The first resource over its limit, in upstream's order (Instances, CPU, Memory, Disk, then the others by name). */
export interface Excess {
  resource: string;
  used: string;
  limit: string;
}

export function firstExcess(usage: Usage, limit: QuotaLimit): Excess | undefined {
  if (limit.instances > 0 && usage.instances > limit.instances) return { resource: 'Instances', used: String(usage.instances), limit: String(limit.instances) };
  if (limit.cpu.sign() !== 0 && compareQuantities(usage.cpu.toString(), limit.cpu) > 0) return { resource: 'CPU', used: usage.cpu.toString(), limit: formatQuantity(limit.cpu) };
  if (limit.memory.sign() !== 0 && compareQuantities(usage.memory, limit.memory) > 0) return { resource: 'Memory', used: formatQuantity(usage.memory), limit: formatQuantity(limit.memory) };
  if (limit.disk.sign() !== 0 && compareQuantities(usage.disk, limit.disk) > 0) return { resource: 'Disk', used: formatQuantity(usage.disk), limit: formatQuantity(limit.disk) };
  for (const name of [...usage.other.keys()].sort()) {
    const used = usage.other.get(name)!;
    const max = limit.other.get(name) ?? parseQuantity(0);
    if (compareQuantities(used, max) > 0) return { resource: name, used: formatQuantity(used), limit: formatQuantity(max) };
  }
  return undefined;
}

/** The denial's message: which quota, which resource, how much against how much. */
export function excessMessage(scope: { workspace: string } | { tenant: string }, excess: Excess): string {
  const where = 'workspace' in scope ? `in workspace "${scope.workspace}"` : `for tenant "${scope.tenant}"`;
  return `quota exceeded ${where}: ${excess.resource} (${excess.used} > ${excess.limit})`;
}

/** An Instance as the quota reads it. */
export interface QuotaInstance {
  name: string;
  running: boolean;
  templateRef: GenericRef;
}

/** Why a running Instance was left out of the sums (upstream's warning). */
export function missingTemplateWarning(template: string, instance: string): string {
  return `template ${template} not found in workspace namespace for instance ${instance}; skipping resource calculation for this instance`;
}

export interface QuotaCheck {
  /** The Instance asking to run, and what its Template uses. */
  candidate: QuotaInstance;
  candidateUsage: Usage;
  /** The other Instances of its namespace, and the Template of a reference (undefined: not found). */
  others: readonly QuotaInstance[];
  templateOf(ref: GenericRef): Pick<Template, 'spec'> | undefined;
  /** Admitted a moment ago but not yet listed as running: counted as running. */
  pending?: readonly { workspace: string; usage: Usage }[];
  namespace: string;
  workspaceLimit: QuotaLimit;
  tenant?: { name: string; limit: QuotaLimit };
}

export type QuotaDecision = { allowed: true; warnings: string[] } | { allowed: false; message: string; warnings: string[] };

/**
 * Whether the candidate fits: its workspace's usage (it, the workspace's other running Instances and
 * the pending ones) within the workspace's limit, and, when given, the namespace's whole usage
 * within the tenant's. The candidate itself counts even when created stopped, as upstream's check does.
 */
export function decideQuota(check: QuotaCheck): QuotaDecision {
  const warnings: string[] = [];
  const workspace = workspaceOfTemplate(check.candidate.templateRef, check.namespace) ?? '';
  let inWorkspace = check.candidateUsage;
  let inTenant = check.candidateUsage;
  for (const other of check.others) {
    if (other.name === check.candidate.name || !other.running) continue;
    const template = check.templateOf(other.templateRef);
    const ws = workspaceOfTemplate(other.templateRef, check.namespace);
    if (!template) {
      warnings.push(missingTemplateWarning(other.templateRef.name, other.name));
      const counted = { ...emptyUsage(), instances: 1 };
      if (ws === workspace) inWorkspace = addUsage(inWorkspace, counted);
      inTenant = addUsage(inTenant, counted);
      continue;
    }
    const usage = templateUsage(template);
    if (ws === workspace) inWorkspace = addUsage(inWorkspace, usage);
    inTenant = addUsage(inTenant, usage);
  }
  for (const p of check.pending ?? []) {
    if (p.workspace === workspace) inWorkspace = addUsage(inWorkspace, p.usage);
    inTenant = addUsage(inTenant, p.usage);
  }
  const overWorkspace = firstExcess(inWorkspace, check.workspaceLimit);
  if (overWorkspace) return { allowed: false, message: excessMessage({ workspace }, overWorkspace), warnings };
  const overTenant = check.tenant && firstExcess(inTenant, check.tenant.limit);
  if (overTenant) return { allowed: false, message: excessMessage({ tenant: check.tenant!.name }, overTenant), warnings };
  return { allowed: true, warnings };
}
