import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface TokenSecretProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /**
   * The pod as owner (garbage collection when it goes).
   * @default none: no ownerReferences
   */
  readonly ownerReferences?: k8s.OwnerReference[];
  /** Token key → value (already capped at tokenByteLimit). */
  readonly tokens: Record<string, string>;
}

/** The tokens copied out of a pod, kept in the cluster so a restarted server still serves them. */
export class TokenSecret extends Construct {
  constructor(scope: Construct, id: string, props: TokenSecretProps) {
    super(scope, id);
    new k8s.KubeSecret(this, 'secret', {
      metadata: { name: props.name, namespace: props.namespace, labels: props.labels, ownerReferences: props.ownerReferences },
      type: 'Opaque',
      data: Object.fromEntries(Object.entries(props.tokens).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
    });
  }
}
