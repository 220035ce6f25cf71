import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Workspace } from '../../src/inputs/types.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { workspaceCommonLabels } from '../../src/model/labels.ts';
import { workspaceNamespaceName } from '../../src/model/naming.ts';
import { WorkspaceNamespace } from './workspace-namespace.ts';
import { WorkspaceRbac } from './workspace-rbac.ts';

export interface WorkspaceChartProps {
  readonly workspace: Workspace;
  readonly config: ComposerConfig;
  /**
   * Labels on every object besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** Every object of one Workspace (docs/behaviour.md §4.2). */
export class WorkspaceChart extends Chart {
  constructor(scope: Construct, id: string, props: WorkspaceChartProps) {
    super(scope, id, { labels: props.chartLabels, disableResourceNameHashes: true });
    const name = props.workspace.metadata.name;
    const namespace = workspaceNamespaceName(name);
    const labels = workspaceCommonLabels(props.config.targetLabel);
    new WorkspaceNamespace(this, 'namespace', { name: namespace, labels });
    new WorkspaceRbac(this, 'rbac', { workspaceName: name, namespace, labels });
  }
}
