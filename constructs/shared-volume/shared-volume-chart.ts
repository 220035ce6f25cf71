import { Chart } from 'cdk8s';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import type { Construct } from 'constructs';
import type { SharedVolume } from '../../src/inputs/types.ts';
import { canonicalQuantity } from '../../src/model/resources.ts';
import { MIRROR_AUTHORIZATION_ANNOTATION, SHARED_VOLUME_MIRROR_AUTHORIZATION, sharedVolumeClaimLabels, sharedVolumeClaimName, sharedVolumeLabels } from '../../src/model/shared-volume.ts';
import { ProvisioningJob } from '../storage/provisioning-job.ts';

export interface SharedVolumeChartProps {
  readonly sharedVolume: SharedVolume;
  /** `sharedVolumeStorageClass`. */
  readonly storageClassName: string;
  /** The provisioning Job's image (`volumeProvisioningImg`). */
  readonly provisioningImage: string;
  /**
   * Labels on every object besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/**
 * One SharedVolume's objects (docs/behaviour.md §16.7), in its namespace: the ReadWriteMany claim,
 * which tenant namespaces may mirror, and the Job that gives the volume to the CrownLabs user.
 */
export class SharedVolumeChart extends Chart {
  constructor(scope: Construct, id: string, props: SharedVolumeChartProps) {
    const sv = props.sharedVolume;
    super(scope, id, { namespace: sv.metadata.namespace, labels: props.chartLabels, disableResourceNameHashes: true });
    const claim = sharedVolumeClaimName(sv.metadata.name);
    const labels = sharedVolumeClaimLabels();
    new k8s.KubePersistentVolumeClaim(this, 'claim', {
      metadata: { name: claim, labels, annotations: { [MIRROR_AUTHORIZATION_ANNOTATION]: SHARED_VOLUME_MIRROR_AUTHORIZATION } },
      spec: {
        accessModes: ['ReadWriteMany'],
        storageClassName: props.storageClassName,
        resources: { requests: { storage: k8s.Quantity.fromString(canonicalQuantity(sv.spec.size)) } },
      },
    });
    new ProvisioningJob(this, 'provisioning', { claimName: claim, image: props.provisioningImage, labels: sharedVolumeLabels() });
  }
}
