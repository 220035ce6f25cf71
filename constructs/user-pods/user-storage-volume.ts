import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface UserStorageVolumeProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  /** The requester's silo: the NFS server. */
  readonly nfsServer: string;
  /** `<nfsStorageRoot>/<user_id>`. */
  readonly nfsPath: string;
  readonly size: string;
}

/** The user's NFS storage as a PV pre-bound to the claim of the same name (seed 004). */
export class UserStorageVolume extends Construct {
  constructor(scope: Construct, id: string, props: UserStorageVolumeProps) {
    super(scope, id);
    new k8s.KubePersistentVolume(this, 'pv', {
      metadata: { name: props.name, labels: props.labels },
      spec: {
        accessModes: ['ReadWriteMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'nfs',
        mountOptions: ['hard', 'nfsvers=4.1'],
        nfs: { server: props.nfsServer, path: props.nfsPath },
        claimRef: { kind: 'PersistentVolumeClaim', namespace: props.namespace, name: props.name },
        capacity: { storage: k8s.Quantity.fromString(props.size) },
      },
    });
  }
}
