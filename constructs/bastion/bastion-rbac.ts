import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface BastionRbacProps {
  /** Name of the ServiceAccount, ClusterRole and ClusterRoleBinding. */
  readonly name: string;
  /** Namespace of the ServiceAccount. */
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /**
   * Rules of the ClusterRole (the platform install passes the derived ones).
   * @default tenants get/list/watch
   */
  readonly rules?: k8s.PolicyRule[];
}

/**
 * The keys sidecar reads every Tenant (docs/behaviour.md §12: all of them, no label filter) and nothing else:
 * a ServiceAccount bound to a ClusterRole with tenants get/list/watch.
 */
export class BastionRbac extends Construct {
  readonly serviceAccountName: string;
  constructor(scope: Construct, id: string, props: BastionRbacProps) {
    super(scope, id);
    this.serviceAccountName = props.name;
    new k8s.KubeServiceAccount(this, 'service-account', { metadata: { name: props.name, namespace: props.namespace, labels: props.labels } });
    new k8s.KubeClusterRole(this, 'cluster-role', {
      metadata: { name: props.name, labels: props.labels },
      rules: props.rules ?? [{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['get', 'list', 'watch'] }],
    });
    new k8s.KubeClusterRoleBinding(this, 'cluster-role-binding', {
      metadata: { name: props.name, labels: props.labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: props.name },
      subjects: [{ kind: 'ServiceAccount', name: props.name, namespace: props.namespace }],
    });
  }
}
