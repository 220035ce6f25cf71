import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { VOLUME_TYPE_LABEL } from '../../src/model/shared-volume.ts';

export interface MirrorClaimProps {
  readonly name: string;
  /**
   * Where the mirror goes.
   * @default the chart's namespace
   */
  readonly namespace?: string;
  /** The claim it mirrors, in another namespace. */
  readonly origin: { readonly namespace: string; readonly claimName: string };
  /** `mirrorStorageClass`, served by the PVC mirror provisioner. */
  readonly storageClassName: string;
  /** Labels besides `crownlabs.polito.it/volume-type: mirror`. */
  readonly labels: Record<string, string>;
}

/**
 * A mirror claim (docs/behaviour.md §16.7, §16.8): the PVC mirror provisioner binds it to the
 * volume behind the claim its cross-namespace `dataSourceRef` names. Its size is a placeholder
 * (upstream's `1`): the volume keeps the origin's.
 */
export class MirrorClaim extends Construct {
  constructor(scope: Construct, id: string, props: MirrorClaimProps) {
    super(scope, id);
    new k8s.KubePersistentVolumeClaim(this, 'claim', {
      metadata: { name: props.name, ...(props.namespace ? { namespace: props.namespace } : {}), labels: { ...props.labels, [VOLUME_TYPE_LABEL]: 'mirror' } },
      spec: {
        accessModes: ['ReadWriteMany'],
        storageClassName: props.storageClassName,
        resources: { requests: { storage: k8s.Quantity.fromString('1') } },
        dataSourceRef: { kind: 'PersistentVolumeClaim', name: props.origin.claimName, namespace: props.origin.namespace },
      },
    });
  }
}
