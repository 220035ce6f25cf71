import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { MYDRIVE_INFO_SECRET, myDriveMirrorAuthorization, myDriveMirrorName, type NfsShare } from '../../src/model/mydrive.ts';
import { MIRROR_AUTHORIZATION_ANNOTATION } from '../../src/model/shared-volume.ts';
import { MirrorClaim } from '../storage/mirror-claim.ts';
import { ProvisioningJob } from '../storage/provisioning-job.ts';

export interface MyDriveProps {
  readonly pvcName: string;
  readonly pvcNamespace: string;
  readonly size: string;
  readonly storageClassName: string;
  /**
   * The personal namespace, where `mydrive-info` goes.
   * @default none (keep-alive dropped it): no `mydrive-info` Secret
   */
  readonly tenantNamespace?: string;
  readonly labels: Record<string, string>;
  /**
   * The NFS share behind the PVC: from configuration when rendering from files, from the bound PV
   * in the controller (docs/behaviour.md §5.4 row 9).
   * @default unknown (PVC not yet bound): no `mydrive-info` Secret yet
   */
  readonly share?: NfsShare;
  /**
   * e62be9e (docs/behaviour.md §16.8): the mirror of the claim in the personal namespace, through
   * which Instances mount it, and the Job that gives the volume to the CrownLabs user.
   * @default none: MyDrive is reached over NFS only
   */
  readonly mirror?: { readonly tenantName: string; readonly storageClassName: string; readonly provisioningImage: string };
}

/**
 * A tenant's MyDrive (docs/behaviour.md §5.4 rows 8–9): the RWX PVC and the `mydrive-info` NFS Secret;
 * at e62be9e also its mirror and provisioning Job (§16.8).
 * The PVC holds the tenant's files, so it is rendered even while the personal namespace is not.
 */
export class MyDrive extends Construct {
  constructor(scope: Construct, id: string, props: MyDriveProps) {
    super(scope, id);
    const mirror = props.mirror;
    new k8s.KubePersistentVolumeClaim(this, 'pvc', {
      metadata: {
        name: props.pvcName,
        namespace: props.pvcNamespace,
        labels: props.labels,
        ...(mirror ? { annotations: { [MIRROR_AUTHORIZATION_ANNOTATION]: myDriveMirrorAuthorization(mirror.tenantName) } } : {}),
      },
      spec: {
        accessModes: ['ReadWriteMany'],
        resources: { requests: { storage: k8s.Quantity.fromString(props.size) } },
        storageClassName: props.storageClassName,
      },
    });
    if (mirror) {
      new ProvisioningJob(this, 'provisioning', { claimName: props.pvcName, namespace: props.pvcNamespace, image: mirror.provisioningImage, labels: props.labels });
      if (props.tenantNamespace) {
        new MirrorClaim(this, 'mirror', {
          name: myDriveMirrorName(mirror.tenantName),
          namespace: props.tenantNamespace,
          origin: { namespace: props.pvcNamespace, claimName: props.pvcName },
          storageClassName: mirror.storageClassName,
          labels: props.labels,
        });
      }
    }
    if (props.share && props.tenantNamespace) {
      new k8s.KubeSecret(this, 'info', {
        metadata: { name: MYDRIVE_INFO_SECRET, namespace: props.tenantNamespace, labels: props.labels },
        type: 'Opaque',
        data: {
          'server-name': Buffer.from(props.share.server).toString('base64'),
          path: Buffer.from(props.share.path).toString('base64'),
        },
      });
    }
  }
}
