import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { LABEL } from '../../src/model/labels.ts';
import { VOLUME_TYPE_LABEL } from '../../src/model/shared-volume.ts';

export interface SharedVolumeMirrorsProps {
  readonly environments: readonly EnvironmentPlan[];
  /** The Instance's object labels. */
  readonly labels: Record<string, string>;
  /** `mirrorStorageClass`, served by the PVC mirror provisioner. */
  readonly storageClassName: string;
}

/**
 * An Instance's mirror claims (docs/behaviour.md §16.7), one per SharedVolume it mounts, in its
 * namespace: the PVC mirror provisioner binds each to the volume behind the SharedVolume's claim,
 * named by a cross-namespace `dataSourceRef`. The size is a placeholder (upstream's `1`): the
 * volume's own size is the SharedVolume's.
 */
export class SharedVolumeMirrors extends Construct {
  constructor(scope: Construct, id: string, props: SharedVolumeMirrorsProps) {
    super(scope, id);
    const seen = new Set<string>();
    for (const env of props.environments) {
      for (const m of env.sharedVolumes ?? []) {
        if (seen.has(m.claimName)) continue;
        seen.add(m.claimName);
        new k8s.KubePersistentVolumeClaim(this, m.claimName, {
          metadata: { name: m.claimName, labels: { ...props.labels, [LABEL.managedBy]: 'instance', [VOLUME_TYPE_LABEL]: 'mirror' } },
          spec: {
            accessModes: ['ReadWriteMany'],
            storageClassName: props.storageClassName,
            resources: { requests: { storage: k8s.Quantity.fromString('1') } },
            dataSourceRef: { kind: 'PersistentVolumeClaim', name: m.origin.claimName, namespace: m.origin.namespace },
          },
        });
      }
    }
  }
}
