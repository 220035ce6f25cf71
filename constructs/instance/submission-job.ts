import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { OwnerReference } from '../../src/inputs/types.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { INSTANCE_POD_SECURITY_CONTEXT, restrictiveSecurityContext } from './instance-pod-defaults.ts';

/** Fixed names and paths of the submission Job (docs/behaviour.md §8.2). */
export const SUBMISSION_JOB = {
  container: 'content-uploader',
  volume: 'persistent',
  mountPath: '/media/data',
  backoffLimit: 10,
  ttlSecondsAfterFinished: 300,
} as const;

export interface SubmissionJobProps {
  /** `N-submitter` (submitterJobName). The namespace is the chart's (the Instance's). */
  readonly name: string;
  /** The Instance's name: the uploaded file name (`FILENAME`). */
  readonly instanceName: string;
  /** The persistent environment's PVC, `N`. */
  readonly claimName: string;
  /** `spec.customizationUrls.contentDestination`. */
  readonly destinationUrl: string;
  /** component=submitter plus the instance object labels (submitterJobLabels), and ours. */
  readonly labels: Record<string, string>;
  readonly config: Pick<ComposerConfig, 'containerEnvContentUploaderImg' | 'containerEnvSidecarsTag'>;
  /**
   * The controller sets the Instance as controller owner.
   * @default none: no ownerReferences
   */
  readonly owner?: OwnerReference;
}

/**
 * The Job that uploads a terminated persistent Instance's content to its `contentDestination`
 * (docs/behaviour.md §8.2): the uploader reads the environment's PVC mounted at `/media/data`.
 */
export class SubmissionJob extends Construct {
  constructor(scope: Construct, id: string, props: SubmissionJobProps) {
    super(scope, id);
    const q = (v: string) => k8s.Quantity.fromString(v);
    new k8s.KubeJob(this, 'job', {
      metadata: {
        name: props.name,
        labels: props.labels,
        ...(props.owner ? { ownerReferences: [{ ...props.owner, controller: true, blockOwnerDeletion: true }] } : {}),
      },
      spec: {
        backoffLimit: SUBMISSION_JOB.backoffLimit,
        ttlSecondsAfterFinished: SUBMISSION_JOB.ttlSecondsAfterFinished,
        template: {
          spec: {
            restartPolicy: 'OnFailure',
            securityContext: { ...INSTANCE_POD_SECURITY_CONTEXT },
            automountServiceAccountToken: false,
            volumes: [{ name: SUBMISSION_JOB.volume, persistentVolumeClaim: { claimName: props.claimName } }],
            containers: [
              {
                name: SUBMISSION_JOB.container,
                image: `${props.config.containerEnvContentUploaderImg}:${props.config.containerEnvSidecarsTag}`,
                resources: { requests: { cpu: q('500m'), memory: q('256Mi') }, limits: { cpu: q('1'), memory: q('1Gi') } },
                securityContext: restrictiveSecurityContext(),
                volumeMounts: [{ name: SUBMISSION_JOB.volume, mountPath: SUBMISSION_JOB.mountPath }],
                env: [
                  { name: 'SOURCE_PATH', value: SUBMISSION_JOB.mountPath },
                  { name: 'DESTINATION_URL', value: props.destinationUrl },
                  { name: 'FILENAME', value: props.instanceName },
                ],
              },
            ],
          },
        },
      },
    });
  }
}
