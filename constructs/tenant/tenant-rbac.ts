import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { PERSONAL_WORKSPACE_BINDING, TENANT_NAMESPACE_OBJECT_NAMES } from '../../src/model/naming.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface TenantRbacProps {
  readonly tenantName: string;
  /**
   * The personal namespace, where the `crownlabs-manage-instances` binding goes.
   * @default none (namespace dropped by keep-alive): only the cluster RBAC is rendered
   */
  readonly namespace?: string;
  /**
   * e62be9e: the Tenant has a personal workspace; with a namespace, it may manage Templates there.
   * @default false
   */
  readonly personalWorkspace?: boolean;
  /** `crownlabs-manage-tenant-<canon>`, the ClusterRole and its binding. */
  readonly manageRoleName: string;
  readonly labels: Record<string, string>;
}

/**
 * What a tenant may do (docs/behaviour.md §5.4 rows 3–5): manage Instances in its namespace (and, with a
 * personal workspace, Templates: §16.4), and read and edit its own Tenant object (not delete it).
 */
export class TenantRbac extends Construct {
  constructor(scope: Construct, id: string, props: TenantRbacProps) {
    super(scope, id);
    const user = [{ kind: 'User', name: props.tenantName, apiGroup: RBAC_GROUP }];
    if (props.namespace) {
      new k8s.KubeRoleBinding(this, 'manage-instances', {
        metadata: { name: TENANT_NAMESPACE_OBJECT_NAMES.manageInstances, namespace: props.namespace, labels: props.labels },
        roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'crownlabs-manage-instances' },
        subjects: user,
      });
      if (props.personalWorkspace) {
        new k8s.KubeRoleBinding(this, 'manage-templates', {
          metadata: { name: PERSONAL_WORKSPACE_BINDING, namespace: props.namespace, labels: props.labels },
          roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: 'crownlabs-manage-templates' },
          subjects: user,
        });
      }
    }
    new k8s.KubeClusterRole(this, 'manage-tenant', {
      metadata: { name: props.manageRoleName, labels: props.labels },
      rules: [
        {
          apiGroups: ['crownlabs.polito.it'],
          resources: ['tenants'],
          resourceNames: [props.tenantName],
          verbs: ['get', 'list', 'watch', 'patch', 'update'],
        },
      ],
    });
    new k8s.KubeClusterRoleBinding(this, 'manage-tenant-binding', {
      metadata: { name: props.manageRoleName, labels: props.labels },
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: props.manageRoleName },
      subjects: user,
    });
  }
}
