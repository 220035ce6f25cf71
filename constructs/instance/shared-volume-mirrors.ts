import { Construct } from 'constructs';
import type { EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { LABEL } from '../../src/model/labels.ts';
import { MirrorClaim } from '../storage/mirror-claim.ts';

export interface SharedVolumeMirrorsProps {
  readonly environments: readonly EnvironmentPlan[];
  /** The Instance's object labels. */
  readonly labels: Record<string, string>;
  /** `mirrorStorageClass`, served by the PVC mirror provisioner. */
  readonly storageClassName: string;
}

/** An Instance's mirror claims (docs/behaviour.md §16.7), one per SharedVolume it mounts, in its namespace. */
export class SharedVolumeMirrors extends Construct {
  constructor(scope: Construct, id: string, props: SharedVolumeMirrorsProps) {
    super(scope, id);
    const seen = new Set<string>();
    for (const env of props.environments) {
      for (const m of env.sharedVolumes ?? []) {
        if (seen.has(m.claimName)) continue;
        seen.add(m.claimName);
        new MirrorClaim(this, m.claimName, { name: m.claimName, origin: m.origin, storageClassName: props.storageClassName, labels: { ...props.labels, [LABEL.managedBy]: 'instance' } });
      }
    }
  }
}
