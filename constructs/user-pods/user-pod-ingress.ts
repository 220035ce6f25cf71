import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { httpServiceName, ingressHost, ingressName } from '../../src/model/user-pods.ts';

export interface UserPodIngressProps {
  readonly podName: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /**
   * The pod as owner (garbage collection when it goes).
   * @default none: no ownerReferences
   */
  readonly ownerReferences?: k8s.OwnerReference[];
  readonly port: number;
  readonly ingressDomain: string;
  /** Secret holding the `*.<ingressDomain>` certificate. */
  readonly wildcardSecret: string;
}

/** `https://<pod>.<ingressDomain>/` → the pod's HTTP Service, TLS by the wildcard certificate. */
export class UserPodIngress extends Construct {
  constructor(scope: Construct, id: string, props: UserPodIngressProps) {
    super(scope, id);
    const host = ingressHost(props.podName, props.ingressDomain);
    new k8s.KubeIngress(this, 'ingress', {
      metadata: { name: ingressName(props.podName), namespace: props.namespace, labels: props.labels, ownerReferences: props.ownerReferences },
      spec: {
        tls: [{ hosts: [host], secretName: props.wildcardSecret }],
        rules: [
          {
            host,
            http: {
              paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: httpServiceName(props.podName), port: { number: props.port } } } }],
            },
          },
        ],
      },
    });
  }
}
