import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Workspace } from '../../src/inputs/types.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { workspaceCommonLabels } from '../../src/model/labels.ts';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { SHARED_VOLUMES_QUOTA, workspaceNamespaceName } from '../../src/model/naming.ts';
import { WorkspaceNamespace } from './workspace-namespace.ts';
import { WorkspaceRbac } from './workspace-rbac.ts';

export interface WorkspaceChartProps {
  readonly workspace: Workspace;
  readonly config: ComposerConfig;
  /**
   * The API level has SharedVolumes: managers manage them in the workspace namespace, within
   * `storage` (the Workspace's disk quota; none: unlimited).
   * @default none: the level has no SharedVolumes
   */
  readonly sharedVolumes?: { readonly storage?: string };
  /**
   * Labels on every object besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** Every object of one Workspace (docs/behaviour.md §4.2; at e62be9e, §16.7). */
export class WorkspaceChart extends Chart {
  constructor(scope: Construct, id: string, props: WorkspaceChartProps) {
    super(scope, id, { labels: props.chartLabels, disableResourceNameHashes: true });
    const name = props.workspace.metadata.name;
    const namespace = workspaceNamespaceName(name);
    const labels = workspaceCommonLabels(props.config.targetLabel);
    new WorkspaceNamespace(this, 'namespace', { name: namespace, labels });
    new WorkspaceRbac(this, 'rbac', { workspaceName: name, namespace, labels, sharedVolumes: props.sharedVolumes !== undefined });
    const storage = props.sharedVolumes?.storage;
    if (storage !== undefined) {
      // The claims of its SharedVolumes are the only ones in the namespace.
      new k8s.KubeResourceQuota(this, 'shared-volumes-quota', {
        metadata: { name: SHARED_VOLUMES_QUOTA, namespace, labels },
        spec: { hard: { 'requests.storage': k8s.Quantity.fromString(storage) } },
      });
    }
  }
}
