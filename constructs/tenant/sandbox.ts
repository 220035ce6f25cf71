import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { LABEL } from '../../src/model/labels.ts';
import { SANDBOX_OBJECTS } from '../../src/model/naming.ts';

export interface SandboxProps {
  readonly tenantName: string;
  readonly namespace: string;
  readonly clusterRole: string;
}

const q = (v: string) => k8s.Quantity.fromString(v);

/**
 * A tenant's sandbox (docs/behaviour.md §5.5): a namespace where it may experiment, with edit rights, a small
 * quota and default container limits. Sandbox objects carry no target label, as upstream.
 */
export class Sandbox extends Construct {
  constructor(scope: Construct, id: string, props: SandboxProps) {
    super(scope, id);
    const labels = { [LABEL.managedBy]: 'tenant', [LABEL.type]: 'sandbox', [LABEL.tenant]: props.tenantName };
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: props.namespace, labels } });
    new k8s.KubeRoleBinding(this, 'editor', {
      metadata: { name: SANDBOX_OBJECTS.RoleBinding, namespace: props.namespace, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: props.clusterRole },
      subjects: [{ kind: 'User', name: props.tenantName, apiGroup: 'rbac.authorization.k8s.io' }],
    });
    new k8s.KubeResourceQuota(this, 'quota', {
      metadata: { name: SANDBOX_OBJECTS.ResourceQuota, namespace: props.namespace, labels },
      spec: { hard: { 'limits.cpu': q('4'), 'limits.memory': q('8G'), 'requests.cpu': q('2'), 'requests.memory': q('8G') } },
    });
    new k8s.KubeLimitRange(this, 'limit-range', {
      metadata: { name: SANDBOX_OBJECTS.LimitRange, namespace: props.namespace, labels },
      spec: {
        limits: [{ type: 'Container', defaultRequest: { cpu: q('10m'), memory: q('50M') }, default: { cpu: q('100m'), memory: q('250M') } }],
      },
    });
  }
}
