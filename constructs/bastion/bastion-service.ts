import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { BASTION } from './bastion-deployment.ts';

export interface BastionServiceProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly selectorLabels: Record<string, string>;
}

/** LoadBalancer Service: users `ssh -J bastion@<lb>` on port 22, sshd listens on 2222 (docs/behaviour.md §2.3). */
export class BastionService extends Construct {
  constructor(scope: Construct, id: string, props: BastionServiceProps) {
    super(scope, id);
    new k8s.KubeService(this, 'service', {
      metadata: { name: props.name, namespace: props.namespace, labels: props.labels },
      spec: {
        type: 'LoadBalancer',
        selector: props.selectorLabels,
        ports: [{ name: 'ssh', port: 22, targetPort: k8s.IntOrString.fromNumber(BASTION.sshdPort), protocol: 'TCP' }],
      },
    });
  }
}
