import type { Tenant, TenantResourceQuota, Workspace, WorkspaceRole } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { LABEL, tenantCommonLabels } from './labels.ts';
import { addQuantities, compareQuantities, formatQuantity, parseQuantity } from '../inputs/quantity.ts';

/** The Tenant's workspace entries split into those that exist and those that do not (docs/behaviour.md §5.3 step 4). */
export function splitWorkspaces(tenant: Tenant, workspaces: Pick<ReadonlyMap<string, Workspace>, 'get'>) {
  const existing: { name: string; role: WorkspaceRole; workspace: Workspace }[] = [];
  const failing: string[] = [];
  for (const entry of tenant.spec.workspaces ?? []) {
    const workspace = workspaces.get(entry.name);
    if (workspace) existing.push({ ...entry, workspace });
    else failing.push(entry.name);
  }
  return { existing, failing };
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
}

/**
 * The tenant's quota (docs/behaviour.md §5.3 step 6): `spec.quota` verbatim when set, else the sum over its
 * existing workspaces, each part capped when the sum reaches the cap.
 */
export function tenantQuota(tenant: Tenant, workspaces: readonly Workspace[], config: Pick<ComposerConfig, 'capCpu' | 'capMemory' | 'capInstances'>): QuotaValues {
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
