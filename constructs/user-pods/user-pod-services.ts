import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { httpServiceName, sshServiceName } from '../../src/model/user-pods.ts';

export interface UserPodServicesProps {
  readonly podName: string;
  readonly namespace: string;
  /** Labels of the Services (createdForPod and ours). */
  readonly labels: Record<string, string>;
  /** The pod's labels: the Services' selector. */
  readonly selector: Record<string, string>;
  /**
   * The pod as owner (garbage collection when it goes).
   * @default none: no ownerReferences
   */
  readonly ownerReferences?: k8s.OwnerReference[];
  /** A container listens on 22: a NodePort Service `<pod>-ssh`. */
  readonly ssh: boolean;
  /**
   * `sciencedata.dk/ingress-port`: a ClusterIP Service `<pod>-http` on it, for the Ingress.
   * @default none: no `<pod>-http` Service
   */
  readonly httpPort?: number;
}

/** The Services of a user pod (seed 004): SSH through a node port, HTTP behind the Ingress. */
export class UserPodServices extends Construct {
  constructor(scope: Construct, id: string, props: UserPodServicesProps) {
    super(scope, id);
    const metadata = (name: string) => ({ name, namespace: props.namespace, labels: props.labels, ownerReferences: props.ownerReferences });
    if (props.ssh) {
      new k8s.KubeService(this, 'ssh', {
        metadata: metadata(sshServiceName(props.podName)),
        spec: {
          type: 'NodePort',
          selector: props.selector,
          ports: [{ name: 'ssh', protocol: 'TCP', port: 22, targetPort: k8s.IntOrString.fromNumber(22) }],
        },
      });
    }
    if (props.httpPort !== undefined) {
      new k8s.KubeService(this, 'http', {
        metadata: metadata(httpServiceName(props.podName)),
        spec: {
          type: 'ClusterIP',
          selector: props.selector,
          ports: [{ name: 'http', protocol: 'TCP', port: props.httpPort, targetPort: k8s.IntOrString.fromNumber(props.httpPort) }],
        },
      });
    }
  }
}
