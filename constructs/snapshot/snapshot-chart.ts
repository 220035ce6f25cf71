import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Instance, InstanceSnapshot, OwnerReference } from '../../src/inputs/types.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { snapshotDestination } from '../../src/model/snapshot.ts';
import { SnapshotJob } from './snapshot-job.ts';

export interface SnapshotChartProps {
  /** A request that passed validateSnapshotRequest. */
  readonly snapshot: InstanceSnapshot;
  /** Its Instance (the tenant name gives the image folder). */
  readonly instance: Instance;
  /** The PVC of the snapshotted environment's VM (`environmentChildName`). */
  readonly claimName: string;
  readonly config: Pick<ComposerConfig, 'vmRegistry' | 'vmRegistrySecret' | 'containerExportImg' | 'containerKanikoImg'>;
  /** Image tag, `snapshotTag(now)` when the Job is first built: the clock stays outside the composition. */
  readonly tag: string;
  /**
   * Controller sink: the InstanceSnapshot as owner (needs its live UID).
   * @default none: the Job has no ownerReferences (files and gitops)
   */
  readonly owner?: OwnerReference;
  /**
   * Labels on every object besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** The snapshot Job of one InstanceSnapshot (docs/behaviour.md §9.3), in the snapshot's namespace. */
export class SnapshotChart extends Chart {
  constructor(scope: Construct, id: string, props: SnapshotChartProps) {
    const { snapshot, instance, config } = props;
    super(scope, id, { namespace: snapshot.metadata.namespace, labels: props.chartLabels, disableResourceNameHashes: true });
    new SnapshotJob(this, 'snapshot-job', {
      name: snapshot.metadata.name,
      claimName: props.claimName,
      destination: snapshotDestination(config.vmRegistry, instance, snapshot.spec.imageName, props.tag),
      exportImage: config.containerExportImg,
      kanikoImage: config.containerKanikoImg,
      registrySecretName: config.vmRegistrySecret,
      owner: props.owner,
    });
  }
}
