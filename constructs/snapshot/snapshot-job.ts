import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { OwnerReference } from '../../src/inputs/types.ts';

/** Mount points and fixed names of the snapshot Job (docs/behaviour.md §9.3). */
export const SNAPSHOT_JOB = {
  exporterContainer: 'img-generator',
  pusherContainer: 'docker-pusher',
  tmpVolume: 'tmp-vol',
  kanikoSecretVolume: 'kaniko-secret',
  dataMount: '/data',
  exporterTmpMount: '/img-tmp',
  workspaceMount: '/workspace',
  kanikoDockerMount: '/kaniko/.docker/',
} as const;

export interface SnapshotJobProps {
  /** Job name: the InstanceSnapshot's name. The namespace is the chart's (the snapshot's). */
  readonly name: string;
  /** The persistent VM's PVC (its environment's children name), read in this namespace (docs/behaviour.md §9.3, §14.10). */
  readonly claimName: string;
  /** kaniko `--destination`, `<vmRegistry>/<imagedir>/<imageName>:<tag>` (see snapshotDestination). */
  readonly destination: string;
  /** `--container-export-img`, used verbatim (no sidecar tag appended). */
  readonly exportImage: string;
  /** `--container-kaniko-img`, used verbatim. */
  readonly kanikoImage: string;
  /** `--vm-registry-secret`: dockerconfigjson Secret kaniko pushes with. */
  readonly registrySecretName: string;
  /**
   * The controller sets the InstanceSnapshot as controller owner (with blockOwnerDeletion).
   * @default none: no ownerReferences (files and gitops)
   */
  readonly owner?: OwnerReference;
  /**
   * Labels of the Job itself; ours (parent, manager) come from the chart.
   * @default none, as upstream
   */
  readonly labels?: Record<string, string>;
}

/**
 * The Job that turns a stopped persistent VM's disk into a container image and pushes it
 * (docs/behaviour.md §9.3): `img-generator` converts the raw disk to qcow2 and writes a two-line Dockerfile
 * into `tmp-vol`; kaniko builds and pushes it. backoffLimit 2, restartPolicy OnFailure, no TTL,
 * no securityContext — as upstream.
 */
export class SnapshotJob extends Construct {
  constructor(scope: Construct, id: string, props: SnapshotJobProps) {
    super(scope, id);
    const pvc = props.claimName;
    const q = (v: string) => k8s.Quantity.fromString(v);
    new k8s.KubeJob(this, 'job', {
      metadata: {
        name: props.name,
        ...(props.labels ? { labels: props.labels } : {}),
        ...(props.owner ? { ownerReferences: [{ ...props.owner, controller: true, blockOwnerDeletion: true }] } : {}),
      },
      spec: {
        backoffLimit: 2,
        template: {
          spec: {
            restartPolicy: 'OnFailure',
            volumes: [
              { name: pvc, persistentVolumeClaim: { claimName: pvc } },
              { name: SNAPSHOT_JOB.tmpVolume, emptyDir: {} },
              {
                name: SNAPSHOT_JOB.kanikoSecretVolume,
                secret: { secretName: props.registrySecretName, items: [{ key: '.dockerconfigjson', path: 'config.json' }] },
              },
            ],
            initContainers: [
              {
                name: SNAPSHOT_JOB.exporterContainer,
                image: props.exportImage,
                volumeMounts: [
                  { name: pvc, mountPath: SNAPSHOT_JOB.dataMount },
                  { name: SNAPSHOT_JOB.tmpVolume, mountPath: SNAPSHOT_JOB.exporterTmpMount },
                ],
                resources: { requests: { cpu: q('1'), memory: q('128Mi') }, limits: { cpu: q('1'), memory: q('256Mi') } },
              },
            ],
            containers: [
              {
                name: SNAPSHOT_JOB.pusherContainer,
                image: props.kanikoImage,
                args: ['--dockerfile=/workspace/Dockerfile', `--destination=${props.destination}`],
                volumeMounts: [
                  { name: SNAPSHOT_JOB.tmpVolume, mountPath: SNAPSHOT_JOB.workspaceMount },
                  { name: SNAPSHOT_JOB.kanikoSecretVolume, mountPath: SNAPSHOT_JOB.kanikoDockerMount },
                ],
                resources: { requests: { cpu: q('1'), memory: q('8Gi') }, limits: { cpu: q('1'), memory: q('32Gi') } },
              },
            ],
          },
        },
      },
    });
  }
}
