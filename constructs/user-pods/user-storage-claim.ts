import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface UserStorageClaimProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly size: string;
}

/** The claim user pods mount as their `sciencedata` volume, bound to the PV of the same name. */
export class UserStorageClaim extends Construct {
  constructor(scope: Construct, id: string, props: UserStorageClaimProps) {
    super(scope, id);
    new k8s.KubePersistentVolumeClaim(this, 'pvc', {
      metadata: { name: props.name, namespace: props.namespace, labels: props.labels },
      spec: {
        accessModes: ['ReadWriteMany'],
        storageClassName: 'nfs',
        volumeName: props.name,
        resources: { requests: { storage: k8s.Quantity.fromString(props.size) } },
      },
    });
  }
}
