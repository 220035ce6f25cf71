import type { Tenant, TenantResourceQuota, Workspace, WorkspaceRole } from '../inputs/types.ts';
import { DEFAULT_API_LEVEL, type ApiLevel } from '../inputs/api-level.ts';
import type { ComposerConfig } from '../config/config.ts';
import { LABEL, tenantCommonLabels } from './labels.ts';
import { addQuantities, compareQuantities, formatQuantity, parseQuantity, type Quantity } from '../inputs/quantity.ts';

/**
 * The Tenant's workspace entries split into those that exist and those that do not (docs/behaviour.md
 * §5.3 step 4). A `candidate` entry (e62be9e) counts only in an `autoEnroll: withApproval` Workspace;
 * elsewhere it is failing, as a missing Workspace is (docs/behaviour.md §16.4).
 */
export function splitWorkspaces(tenant: Tenant, workspaces: Pick<ReadonlyMap<string, Workspace>, 'get'>) {
  const existing: { name: string; role: WorkspaceRole; workspace: Workspace }[] = [];
  const failing: string[] = [];
  for (const entry of tenant.spec.workspaces ?? []) {
    const workspace = workspaces.get(entry.name);
    if (workspace && (entry.role !== 'candidate' || workspace.spec.autoEnroll === 'withApproval')) existing.push({ ...entry, workspace });
    else failing.push(entry.name);
  }
  return { existing, failing };
}

/** The existing entries whose Workspace grants something: a candidate's quota and roles wait for a manager's approval. */
export function enrolledWorkspaces<E extends { role: WorkspaceRole }>(existing: readonly E[]): E[] {
  return existing.filter((e) => e.role !== 'candidate');
}

/** The failing-workspace entry of a personal workspace whose RoleBinding could not be put in place (e62be9e). */
export const PERSONAL_WORKSPACE_FAILING = 'personal-workspace';

/**
 * e62be9e: the personal workspace's status (docs/behaviour.md §16.4). Created once its RoleBinding
 * is live; failing when the Tenant has one and the personal namespace is live but the binding is
 * not; neither without the namespace (keep-alive dropped it) or without a personal workspace.
 */
export function personalWorkspaceState(tenant: Pick<Tenant, 'spec'>, namespaceLive: boolean, bindingLive: boolean): { created: boolean; failing: boolean } {
  if (!tenant.spec.personalWorkspace || !namespaceLive) return { created: false, failing: false };
  return { created: bindingLive, failing: !bindingLive };
}

/** Labels of a tenant's personal namespace (docs/behaviour.md §5.4 row 1). */
export function tenantNamespaceLabels(tenant: Tenant, config: ComposerConfig): Record<string, string> {
  return {
    ...tenantCommonLabels(config.targetLabel),
    [LABEL.type]: 'tenant',
    [LABEL.name]: tenant.metadata.name,
    [LABEL.instanceResourcesReplication]: 'true',
  };
}

export interface QuotaValues {
  cpu: string;
  memory: string;
  instances: number;
  /** e62be9e: `requests.storage`, the summed `disk` (`0` when none). */
  storage?: string;
  /** e62be9e: the summed `otherResources`, each under its own key. */
  other?: Record<string, string>;
}

type QuotaCaps = Pick<ComposerConfig, 'capCpu' | 'capMemory' | 'capInstances'>;

/**
 * The tenant's quota, per API level: at 2e8aeb9 (docs/behaviour.md §5.3 step 6) `spec.quota`
 * verbatim when set, else the sum over its workspaces; at e62be9e (§16.4) the sum over its
 * workspaces and its personal workspace, with disk and other resources. `workspaces` are those it
 * is enrolled in (enrolledWorkspaces: no candidate's).
 */
export function tenantQuota(tenant: Tenant, workspaces: readonly Workspace[], config: QuotaCaps, level: ApiLevel = DEFAULT_API_LEVEL): QuotaValues {
  return level === 'e62be9e' ? resourceSpecQuota(tenant, workspaces, config) : summedQuota(tenant, workspaces, config);
}

/** Each part capped when the sum reaches the cap (2e8aeb9: always; e62be9e: a zero cap disables it). */
function capped(sum: Quantity, cap: string, zeroDisables: boolean): Quantity {
  const c = parseQuantity(cap);
  if (zeroDisables && c.sign() === 0) return sum;
  return compareQuantities(sum, c) >= 0 ? c : sum;
}

function resourceSpecQuota(tenant: Tenant, workspaces: readonly Workspace[], config: QuotaCaps): QuotaValues {
  let cpu = 0n;
  let memory = parseQuantity(0);
  let disk = parseQuantity(0);
  let instances = 0;
  const other = new Map<string, Quantity>();
  const specs = [...workspaces.map((w) => w.spec.quota), ...(tenant.spec.personalWorkspace ? [tenant.spec.personalWorkspace] : [])];
  for (const q of specs) {
    // Whole cores (an input's string cpu was made a number when it was read: src/inputs/legacy-cpu.ts).
    cpu += BigInt(q.cpu);
    memory = addQuantities(memory, parseQuantity(q.memory));
    if (q.disk !== undefined) disk = addQuantities(disk, parseQuantity(q.disk));
    instances += q.instances;
    for (const [k, v] of Object.entries(q.otherResources ?? {})) other.set(k, other.has(k) ? addQuantities(other.get(k)!, v) : parseQuantity(v));
  }
  const cpuQ = capped(parseQuantity(cpu.toString()), config.capCpu, true);
  const instancesCapped = config.capInstances > 0 && instances >= config.capInstances ? config.capInstances : instances;
  return {
    cpu: formatQuantity(cpuQ),
    memory: formatQuantity(capped(memory, config.capMemory, true)),
    instances: instancesCapped,
    storage: formatQuantity(disk),
    other: Object.fromEntries([...other].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, formatQuantity(v)])),
  };
}

function summedQuota(tenant: Tenant, workspaces: readonly Workspace[], config: QuotaCaps): QuotaValues {
  if (tenant.spec.quota) return quotaValues(tenant.spec.quota);
  let cpu = parseQuantity(0);
  let memory = parseQuantity(0);
  let instances = 0;
  for (const ws of workspaces) {
    cpu = addQuantities(cpu, parseQuantity(ws.spec.quota.cpu));
    memory = addQuantities(memory, parseQuantity(ws.spec.quota.memory));
    instances += ws.spec.quota.instances;
  }
  const capCpu = parseQuantity(config.capCpu);
  const capMemory = parseQuantity(config.capMemory);
  return {
    cpu: formatQuantity(compareQuantities(cpu, capCpu) >= 0 ? capCpu : cpu),
    memory: formatQuantity(compareQuantities(memory, capMemory) >= 0 ? capMemory : memory),
    instances: instances >= config.capInstances ? config.capInstances : instances,
  };
}

function quotaValues(q: TenantResourceQuota): QuotaValues {
  return { cpu: formatQuantity(parseQuantity(q.cpu)), memory: formatQuantity(parseQuantity(q.memory)), instances: q.instances };
}

/** clean() of docs/behaviour.md §5.6: spaces → `_`, drop what is not `[A-Za-z0-9_]`, trim `_`. */
export function cleanName(name: string): string {
  return name
    .replace(/ /g, '_')
    .replace(/[^A-Za-z0-9_]/g, '')
    .replace(/^_+|_+$/g, '');
}

/**
 * The labels the operator keeps on the Tenant itself (docs/behaviour.md §5.6), merged over its current ones:
 * workspace roles of existing workspaces, `no-workspaces`, cleaned first and last names, and the
 * target label is left as it is (the webhook owns it).
 */
export function tenantOwnLabels(tenant: Tenant, workspaces: ReadonlyMap<string, Workspace>, config: Pick<ComposerConfig, 'baseWorkspaces'>): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(tenant.metadata.labels ?? {})) {
    if (!k.startsWith(LABEL.workspacePrefix) && k !== LABEL.noWorkspaces) labels[k] = v;
  }
  const { existing } = splitWorkspaces(tenant, workspaces);
  for (const e of existing) labels[`${LABEL.workspacePrefix}${e.name}`] = e.role;
  const nonBase = existing.filter((e) => !config.baseWorkspaces.includes(e.name)).length;
  if (nonBase === 0) labels[LABEL.noWorkspaces] = 'true';
  labels[LABEL.firstName] = cleanName(tenant.spec.firstName);
  labels[LABEL.lastName] = cleanName(tenant.spec.lastName);
  return labels;
}

/**
 * Whether the Tenant webhooks have seen a Tenant: every write they admit leaves a non-empty target
 * label, except on `service-tenant`, which they blank. Only such Tenants count as a workspace's
 * managers (docs/behaviour.md §7.4): a manager's keys and e-mail reach every Instance of it.
 */
export function admittedByTenantWebhooks(tenant: { metadata: { labels?: Record<string, string> } }, config: Pick<ComposerConfig, 'targetLabel'>): boolean {
  return Boolean(tenant.metadata.labels?.[config.targetLabel.key]);
}

/** Whether a Tenant or Workspace is this shard's (docs/behaviour.md §2.1 `--target-label`). */
export function matchesTargetLabel(obj: { metadata: { labels?: Record<string, string> } }, config: Pick<ComposerConfig, 'targetLabel'>): boolean {
  return obj.metadata.labels?.[config.targetLabel.key] === config.targetLabel.value;
}
