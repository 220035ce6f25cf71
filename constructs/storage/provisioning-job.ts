import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { CROWNLABS_USER_ID, PROVISIONING_MOUNT_PATH, provisioningJobName } from '../../src/model/shared-volume.ts';

export interface ProvisioningJobProps {
  /** The claim whose volume it hands over; the Job is `<claim>-provision`, in the claim's namespace. */
  readonly claimName: string;
  /**
   * Where the claim is.
   * @default the chart's namespace
   */
  readonly namespace?: string;
  readonly image: string;
  readonly labels: Record<string, string>;
}

/**
 * The one-shot Job that gives a new volume (a SharedVolume, a MyDrive) to the CrownLabs user
 * (docs/behaviour.md §16.7): `chown -R 1010:1010`, backoffLimit 3, 100m CPU and 128Mi memory, as
 * upstream's. No TTL: kept for the volume's life, it runs once.
 */
export class ProvisioningJob extends Construct {
  constructor(scope: Construct, id: string, props: ProvisioningJobProps) {
    super(scope, id);
    const q = (v: string) => k8s.Quantity.fromString(v);
    const owner = `${CROWNLABS_USER_ID}:${CROWNLABS_USER_ID}`;
    new k8s.KubeJob(this, 'job', {
      metadata: { name: provisioningJobName(props.claimName), ...(props.namespace ? { namespace: props.namespace } : {}), labels: props.labels },
      spec: {
        backoffLimit: 3,
        template: {
          spec: {
            restartPolicy: 'OnFailure',
            containers: [
              {
                name: 'chown-container',
                image: props.image,
                command: ['chown', '-R', owner, PROVISIONING_MOUNT_PATH],
                volumeMounts: [{ name: 'drive', mountPath: PROVISIONING_MOUNT_PATH }],
                resources: { requests: { cpu: q('100m'), memory: q('128Mi') }, limits: { cpu: q('100m'), memory: q('128Mi') } },
              },
            ],
            volumes: [{ name: 'drive', persistentVolumeClaim: { claimName: props.claimName } }],
          },
        },
      },
    });
  }
}
