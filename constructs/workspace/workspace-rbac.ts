import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { MANAGE_SHARED_VOLUMES_ROLE, workspaceGroupName } from '../../src/model/naming.ts';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface WorkspaceRbacProps {
  readonly workspaceName: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /**
   * Bind `crownlabs-manage-sharedvolumes` to the managers (the API level has SharedVolumes).
   * @default false
   */
  readonly sharedVolumes?: boolean;
}

/**
 * Who may do what in a workspace (docs/behaviour.md §4.2 rows 2–5; at e62be9e also §16.7's SharedVolume managers). Subjects are the groups the API server's
 * OIDC setup derives from Keycloak client roles (`kubernetes:workspace-<ws>:<role>`).
 */
export class WorkspaceRbac extends Construct {
  constructor(scope: Construct, id: string, props: WorkspaceRbacProps) {
    super(scope, id);
    const ws = props.workspaceName;
    const group = (role: 'manager' | 'user') => [{ kind: 'Group', name: workspaceGroupName(ws, role), apiGroup: RBAC_GROUP }];
    const clusterRole = (name: string) => ({ apiGroup: RBAC_GROUP, kind: 'ClusterRole', name });
    new k8s.KubeClusterRoleBinding(this, 'manage-instances', {
      metadata: { name: `crownlabs-manage-instances-${ws}`, labels: props.labels },
      roleRef: clusterRole('crownlabs-manage-instances'),
      subjects: group('manager'),
    });
    new k8s.KubeRoleBinding(this, 'view-templates', {
      metadata: { name: 'crownlabs-view-templates', namespace: props.namespace, labels: props.labels },
      roleRef: clusterRole('crownlabs-view-templates'),
      subjects: group('user'),
    });
    new k8s.KubeRoleBinding(this, 'manage-templates', {
      metadata: { name: 'crownlabs-manage-templates', namespace: props.namespace, labels: props.labels },
      roleRef: clusterRole('crownlabs-manage-templates'),
      subjects: group('manager'),
    });
    if (props.sharedVolumes) {
      new k8s.KubeRoleBinding(this, 'manage-sharedvolumes', {
        metadata: { name: MANAGE_SHARED_VOLUMES_ROLE, namespace: props.namespace, labels: props.labels },
        roleRef: clusterRole(MANAGE_SHARED_VOLUMES_ROLE),
        subjects: group('manager'),
      });
    }
    new k8s.KubeClusterRoleBinding(this, 'manage-tenants', {
      metadata: { name: `crownlabs-manage-tenants-${ws}`, labels: props.labels },
      roleRef: clusterRole('crownlabs-manage-tenants'),
      subjects: group('manager'),
    });
  }
}
