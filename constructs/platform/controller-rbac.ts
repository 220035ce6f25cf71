import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface ControllerRbacProps {
  /** Name of the ServiceAccount, ClusterRole and ClusterRoleBinding; the lease Role and binding add `-leader-election`. */
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /** Cluster-wide rules (src/platform/derive-rbac.ts derives them from what the controller renders and reads). */
  readonly rules: k8s.PolicyRule[];
  /** Rules on the leader-election Leases, in the install's namespace. */
  readonly leaseRules: k8s.PolicyRule[];
}

/** The controller's identity, shared by every shard: one ServiceAccount, its ClusterRole and its leader-election Role. */
export class ControllerRbac extends Construct {
  readonly serviceAccountName: string;
  constructor(scope: Construct, id: string, props: ControllerRbacProps) {
    super(scope, id);
    const { name, namespace: ns, labels } = props;
    this.serviceAccountName = name;
    new k8s.KubeServiceAccount(this, 'controller-sa', { metadata: { name, namespace: ns, labels } });
    new k8s.KubeClusterRole(this, 'controller-role', { metadata: { name, labels }, rules: props.rules });
    new k8s.KubeClusterRoleBinding(this, 'controller-binding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    });
    new k8s.KubeRole(this, 'controller-lease-role', { metadata: { name: `${name}-leader-election`, namespace: ns, labels }, rules: props.leaseRules });
    new k8s.KubeRoleBinding(this, 'controller-lease-binding', {
      metadata: { name: `${name}-leader-election`, namespace: ns, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${name}-leader-election` },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    });
  }
}
