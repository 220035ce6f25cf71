import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { LABEL } from '../../src/model/labels.ts';
import { TENANT_NAMESPACE_OBJECT_NAMES } from '../../src/model/naming.ts';

export interface TenantNetworkPoliciesProps {
  readonly namespace: string;
  readonly labels: Record<string, string>;
}

/**
 * Isolation of a personal namespace (docs/behaviour.md §5.4 rows 6–7): pods accept traffic from their own
 * namespace and from namespaces labelled `allow-instance-access=true` (ingress controller, bastion).
 * policyTypes is left unset (defaults to Ingress), as upstream.
 */
export class TenantNetworkPolicies extends Construct {
  constructor(scope: Construct, id: string, props: TenantNetworkPoliciesProps) {
    super(scope, id);
    new k8s.KubeNetworkPolicy(this, 'deny-ingress', {
      metadata: { name: TENANT_NAMESPACE_OBJECT_NAMES.denyIngress, namespace: props.namespace, labels: props.labels },
      spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] },
    });
    new k8s.KubeNetworkPolicy(this, 'allow-trusted', {
      metadata: { name: TENANT_NAMESPACE_OBJECT_NAMES.allowTrustedIngress, namespace: props.namespace, labels: props.labels },
      spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { [LABEL.allowInstanceAccess]: 'true' } } }] }] },
    });
  }
}
