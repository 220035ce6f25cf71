import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { PublicExposurePlan } from '../../src/model/public-exposure.ts';
import { LABEL } from '../../src/model/labels.ts';

export interface PublicExposureProps {
  readonly plan: Extract<PublicExposurePlan, { state: 'allocated' }>;
  /** Labels of the NetworkPolicy (the Instance's object labels, as upstream's). */
  readonly labels: Record<string, string>;
}

/**
 * The LoadBalancer Service `<canon>-pe` and the NetworkPolicy letting its traffic in, of a running
 * Instance with an allocation (docs/behaviour.md §18). The address is asked for through the
 * configured annotation; the LoadBalancer implementation reports the one it gave in the status.
 */
export class PublicExposure extends Construct {
  constructor(scope: Construct, id: string, props: PublicExposureProps) {
    super(scope, id);
    const pe = props.plan;
    new k8s.KubeService(this, 'service', {
      metadata: { name: pe.serviceName, labels: pe.serviceLabels, annotations: pe.serviceAnnotations },
      spec: {
        type: 'LoadBalancer',
        selector: pe.selectorLabels,
        ports: pe.allocation.ports.map((p) => ({ name: p.name, port: p.port, targetPort: k8s.IntOrString.fromNumber(p.targetPort), protocol: p.protocol })),
      },
    });
    new k8s.KubeNetworkPolicy(this, 'network-policy', {
      metadata: { name: pe.networkPolicyName, labels: props.labels },
      spec: {
        podSelector: { matchLabels: { [LABEL.instance]: pe.instanceName } },
        ingress: [{ ports: pe.allocation.ports.map((p) => ({ port: k8s.IntOrString.fromNumber(p.targetPort), protocol: p.protocol })) }],
        policyTypes: ['Ingress'],
      },
    });
  }
}
