/**
 * Every name CrownLabs derives from its resources (docs/behaviour.md §0.2, §4.2, §5.2), in one place.
 */
import type { ApiLevel } from '../inputs/api-level.ts';

/** `x` with every `.` replaced by `-` (docs/behaviour.md §0.2). */
export function canon(name: string): string {
  return name.replace(/\./g, '-');
}

export function tenantNamespaceName(tenantName: string): string {
  return `tenant-${canon(tenantName)}`;
}

export function sandboxNamespaceName(tenantName: string): string {
  return `sandbox-${canon(tenantName)}`;
}

/** The objects a Tenant renders into its sandbox, by kind (docs/behaviour.md §5.5). */
export const SANDBOX_OBJECTS: Readonly<Record<string, string>> = {
  RoleBinding: 'sandbox-editor',
  ResourceQuota: 'sandbox-resource-quota',
  LimitRange: 'sandbox-limit-range',
};

/** Workspace namespaces are not canonicalised (docs/behaviour.md §0.2). */
export function workspaceNamespaceName(workspaceName: string): string {
  return `workspace-${workspaceName}`;
}

/** ClusterRole and ClusterRoleBinding letting a tenant manage its own Tenant object. */
export function tenantManageRoleName(tenantName: string): string {
  return `crownlabs-manage-${tenantNamespaceName(tenantName)}`;
}

/**
 * Names of the objects a Tenant's set renders in its personal namespace besides `mydrive-info`
 * (docs/behaviour.md §5.4 rows 2, 3, 6, 7; the constructs take them from here).
 */
export const TENANT_NAMESPACE_OBJECT_NAMES = {
  quota: 'crownlabs-resource-quota',
  manageInstances: 'crownlabs-manage-instances',
  denyIngress: 'crownlabs-deny-ingress-traffic',
  allowTrustedIngress: 'crownlabs-allow-trusted-ingress-traffic',
} as const;

/**
 * e62be9e: the personal workspace's RoleBinding in the personal namespace (docs/behaviour.md §16.4).
 * Not among the names above, which reserve Instance names: no Instance child is a RoleBinding.
 */
export const PERSONAL_WORKSPACE_BINDING = 'crownlabs-manage-templates';

/** e62be9e: the ClusterRole, and its RoleBinding in a workspace namespace, of the managers' SharedVolumes (§16.7). */
export const MANAGE_SHARED_VOLUMES_ROLE = 'crownlabs-manage-sharedvolumes';

/** e62be9e: the ResourceQuota of a workspace namespace, which bounds its SharedVolumes by the Workspace's disk quota (§16.7). */
export const SHARED_VOLUMES_QUOTA = 'crownlabs-resource-quota';

export function myDrivePvcName(tenantName: string): string {
  return `${canon(tenantName)}-drive`;
}

/**
 * Base name of an Instance's children. With several environments, per-environment children are
 * `<canon(instance)>-<env>` (as upstream HEAD); with one, the upstream names are kept.
 */
export function instanceChildName(instanceName: string, envName?: string): string {
  return envName === undefined ? canon(instanceName) : `${canon(instanceName)}-${envName}`;
}

/** Ingress of an environment: `-app` for Standalone, `-gui` for the others (docs/behaviour.md §7.3). */
export function instanceIngressName(base: string, standalone: boolean): string {
  return `${base}-${standalone ? 'app' : 'gui'}`;
}

export function oauth2ProxyName(base: string): string {
  return `${base}-oauth2-proxy`;
}

export function submitterJobName(instanceName: string): string {
  return `${canon(instanceName)}-submitter`;
}

/** Keycloak client role / Kubernetes group names of a workspace (docs/behaviour.md §4.2, §4.3). */
export function workspaceRoleName(workspaceName: string, role: 'manager' | 'user'): string {
  return `workspace-${workspaceName}:${role}`;
}

export function workspaceGroupName(workspaceName: string, role: 'manager' | 'user'): string {
  return `kubernetes:${workspaceRoleName(workspaceName, role)}`;
}

const ROLE_DESCRIPTION: Readonly<Record<ApiLevel, (prettyName: string, role: 'manager' | 'user') => string>> = {
  '2e8aeb9': (prettyName) => prettyName,
  e62be9e: (prettyName, role) => `${prettyName} ${role === 'manager' ? 'Manager' : 'User'} Role`,
};

/**
 * The description of a workspace's Keycloak client role, per API level (docs/behaviour.md §4.3,
 * §16.4): the pretty name at 2e8aeb9; `<prettyName> Manager Role` / `<prettyName> User Role` at e62be9e.
 */
export function workspaceRoleDescription(prettyName: string, role: 'manager' | 'user', level: ApiLevel): string {
  return ROLE_DESCRIPTION[level](prettyName, role);
}
