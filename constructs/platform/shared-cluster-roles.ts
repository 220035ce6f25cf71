import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { MANAGE_SHARED_VOLUMES_ROLE } from '../../src/model/naming.ts';

const CROWNLABS = 'crownlabs.polito.it';

/** Every verb on a resource, the collection delete included (what the upstream chart grants). */
export const ALL_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
const READ_VERBS = ['get', 'list', 'watch'];

/** The names of the ClusterRoles of docs/behaviour.md §3, bound by the Workspace and Tenant sets. */
export const SHARED_CLUSTER_ROLES = {
  manageInstances: 'crownlabs-manage-instances',
  viewTemplates: 'crownlabs-view-templates',
  manageTemplates: 'crownlabs-manage-templates',
  manageTenants: 'crownlabs-manage-tenants',
  sandbox: 'crownlabs-sandbox',
} as const;

export interface SharedClusterRolesProps {
  /**
   * Labels of every ClusterRole (the chart adds ours).
   * @default none: only the chart's labels
   */
  readonly labels?: Record<string, string>;
  /**
   * Name of the sandbox ClusterRole (`--sandbox-cluster-role`).
   * @default `crownlabs-sandbox`
   */
  readonly sandboxClusterRole?: string;
  /**
   * Render `crownlabs-manage-sharedvolumes` (API levels with SharedVolumes).
   * @default false
   */
  readonly sharedVolumes?: boolean;
}

/**
 * The ClusterRoles that the tenant-operator's bindings refer to but never creates (docs/behaviour.md §3; upstream
 * ships them in the `deploy/crownlabs` chart):
 *
 * - `crownlabs-manage-instances`: Instances, and their status, every verb. Bound per tenant namespace
 *   (docs/behaviour.md §5.4 row 3) and, cluster-wide, to the managers of each workspace (docs/behaviour.md §4.2 row 2).
 * - `crownlabs-view-templates` / `crownlabs-manage-templates`: read / every verb on Templates, bound
 *   in `workspace-<ws>` to the workspace's users / managers (docs/behaviour.md §4.2 rows 3–4).
 * - `crownlabs-manage-tenants`: read, create and edit Tenants, never delete (docs/behaviour.md §4.2 row 5).
 * - `crownlabs-manage-sharedvolumes` (e62be9e): every verb on SharedVolumes, bound in `workspace-<ws>` to its managers (§16.7).
 * - `crownlabs-sandbox`: namespaced edit rights for a tenant's sandbox (docs/behaviour.md §5.5): workloads,
 *   their configuration and networking, Roles and RoleBindings, and read-only metrics. **Here** without
 *   Endpoints or EndpointSlices (hand-written ones relay the ingress controller to another tenant's pod, past
 *   its proxy) and without DaemonSets (a pod on every node is no experiment).
 */
export class SharedClusterRoles extends Construct {
  constructor(scope: Construct, id: string, props: SharedClusterRolesProps = {}) {
    super(scope, id);
    const role = (cid: string, name: string, rules: k8s.PolicyRule[]) =>
      new k8s.KubeClusterRole(this, cid, { metadata: { name, labels: props.labels }, rules });

    role('manage-instances', SHARED_CLUSTER_ROLES.manageInstances, [
      { apiGroups: [CROWNLABS], resources: ['instances', 'instances/status'], verbs: [...ALL_VERBS] },
    ]);
    role('view-templates', SHARED_CLUSTER_ROLES.viewTemplates, [{ apiGroups: [CROWNLABS], resources: ['templates'], verbs: READ_VERBS }]);
    role('manage-templates', SHARED_CLUSTER_ROLES.manageTemplates, [{ apiGroups: [CROWNLABS], resources: ['templates'], verbs: [...ALL_VERBS] }]);
    if (props.sharedVolumes) role('manage-sharedvolumes', MANAGE_SHARED_VOLUMES_ROLE, [{ apiGroups: [CROWNLABS], resources: ['sharedvolumes'], verbs: [...ALL_VERBS] }]);
    role('manage-tenants', SHARED_CLUSTER_ROLES.manageTenants, [
      { apiGroups: [CROWNLABS], resources: ['tenants'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
    ]);
    role('sandbox', props.sandboxClusterRole ?? SHARED_CLUSTER_ROLES.sandbox, [
      {
        apiGroups: [''],
        resources: [
          'pods',
          'pods/attach',
          'pods/exec',
          'pods/portforward',
          'pods/proxy',
          'pods/log',
          'services',
          'services/proxy',
          'configmaps',
          'secrets',
          'persistentvolumeclaims',
          'serviceaccounts',
          'replicationcontrollers',
          'replicationcontrollers/scale',
        ],
        verbs: [...ALL_VERBS],
      },
      { apiGroups: [''], resources: ['events', 'resourcequotas', 'limitranges', 'pods/status'], verbs: READ_VERBS },
      {
        apiGroups: ['apps'],
        resources: ['deployments', 'deployments/scale', 'deployments/rollback', 'replicasets', 'replicasets/scale', 'statefulsets', 'statefulsets/scale', 'controllerrevisions'],
        verbs: [...ALL_VERBS],
      },
      { apiGroups: ['batch'], resources: ['jobs', 'cronjobs'], verbs: [...ALL_VERBS] },
      { apiGroups: ['autoscaling'], resources: ['horizontalpodautoscalers'], verbs: [...ALL_VERBS] },
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses', 'networkpolicies'], verbs: [...ALL_VERBS] },
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles', 'rolebindings'], verbs: [...ALL_VERBS] },
      { apiGroups: ['metrics.k8s.io'], resources: ['pods', 'nodes'], verbs: READ_VERBS },
    ]);
  }
}
