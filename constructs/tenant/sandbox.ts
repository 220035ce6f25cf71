import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { LABEL } from '../../src/model/labels.ts';
import { SANDBOX_OBJECTS } from '../../src/model/naming.ts';

export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

export interface SandboxProps {
  readonly tenantName: string;
  readonly namespace: string;
  readonly clusterRole: string;
  /**
   * Pod Security level enforced in the namespace (config `sandboxPodSecurity`).
   * @default `baseline`
   */
  readonly podSecurity?: PodSecurityLevel;
}

const q = (v: string) => k8s.Quantity.fromString(v);

/**
 * Most objects of each kind the sandbox role lets a tenant create (docs/behaviour.md §5.5). Every
 * object sits in the API server's and the controller's caches: without counts, one tenant could fill
 * them (a Secret may hold ~1 MiB). Generous for experiments, and room for what Kubernetes adds itself
 * (the `default` ServiceAccount, the `kube-root-ca.crt` ConfigMap, a Deployment's old ReplicaSets).
 */
export const SANDBOX_OBJECT_COUNTS: Readonly<Record<string, string>> = {
  // Non-terminal pods only (`count/pods` would also count the finished pods of Jobs).
  pods: '50',
  'count/secrets': '50',
  'count/configmaps': '50',
  'count/services': '20',
  'count/persistentvolumeclaims': '10',
  'count/serviceaccounts': '20',
  'count/replicationcontrollers': '10',
  'count/deployments.apps': '20',
  // Up to 10 old ReplicaSets per Deployment (revisionHistoryLimit).
  'count/replicasets.apps': '200',
  'count/statefulsets.apps': '10',
  'count/controllerrevisions.apps': '200',
  'count/jobs.batch': '50',
  'count/cronjobs.batch': '10',
  'count/horizontalpodautoscalers.autoscaling': '10',
  'count/ingresses.networking.k8s.io': '10',
  'count/networkpolicies.networking.k8s.io': '20',
  'count/roles.rbac.authorization.k8s.io': '20',
  'count/rolebindings.rbac.authorization.k8s.io': '20',
};

/**
 * A tenant's sandbox (docs/behaviour.md §5.5): a namespace where it may experiment, with edit rights, a small
 * quota and default container limits. Sandbox objects carry no target label, as upstream. **Here** the namespace
 * enforces a Pod Security level and the quota also counts objects.
 */
export class Sandbox extends Construct {
  constructor(scope: Construct, id: string, props: SandboxProps) {
    super(scope, id);
    const labels = { [LABEL.managedBy]: 'tenant', [LABEL.type]: 'sandbox', [LABEL.tenant]: props.tenantName };
    const podSecurity = { 'pod-security.kubernetes.io/enforce': props.podSecurity ?? 'baseline' };
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: props.namespace, labels: { ...labels, ...podSecurity } } });
    new k8s.KubeRoleBinding(this, 'editor', {
      metadata: { name: SANDBOX_OBJECTS.RoleBinding, namespace: props.namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: props.clusterRole },
      subjects: [{ kind: 'User', name: props.tenantName, apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const counts = Object.fromEntries(Object.entries(SANDBOX_OBJECT_COUNTS).map(([k, v]) => [k, q(v)]));
    new k8s.KubeResourceQuota(this, 'quota', {
      metadata: { name: SANDBOX_OBJECTS.ResourceQuota, namespace: props.namespace, labels },
      spec: { hard: { 'limits.cpu': q('4'), 'limits.memory': q('8G'), 'requests.cpu': q('2'), 'requests.memory': q('8G'), ...counts } },
    });
    new k8s.KubeLimitRange(this, 'limit-range', {
      metadata: { name: SANDBOX_OBJECTS.LimitRange, namespace: props.namespace, labels },
      spec: {
        limits: [{ type: 'Container', defaultRequest: { cpu: q('10m'), memory: q('50M') }, default: { cpu: q('100m'), memory: q('250M') } }],
      },
    });
  }
}
