import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { PlatformInstall, type PlatformInstallProps } from './platform-install.ts';
import { SharedClusterRoles } from './shared-cluster-roles.ts';

/** Labels of every platform object: who manages it, and what it is part of. */
export const PLATFORM_LABELS = {
  'app.kubernetes.io/managed-by': 'crownlabs-composer',
  'app.kubernetes.io/part-of': 'crownlabs',
} as const;

export interface PlatformChartProps {
  /**
   * Name of the sandbox ClusterRole (config `sandboxClusterRole`).
   * @default `crownlabs-sandbox`
   */
  readonly sandboxClusterRole?: string;
  /**
   * The API level has SharedVolumes: render their managers' ClusterRole.
   * @default false
   */
  readonly sharedVolumes?: boolean;
  /**
   * Extra labels on every object (ours: parent and manager).
   * @default none: only PLATFORM_LABELS
   */
  readonly chartLabels?: Record<string, string>;
  /**
   * The whole install of the components (`crownlabs manifests`).
   * @default none: only the shared ClusterRoles
   */
  readonly install?: PlatformInstallProps;
}

/**
 * What the platform needs before any Workspace or Tenant set is applied: for now the shared
 * ClusterRoles of docs/behaviour.md §3, which upstream ships in its Helm chart and we render ourselves.
 */
export class PlatformChart extends Chart {
  constructor(scope: Construct, id: string, props: PlatformChartProps = {}) {
    // No chart namespace: most objects here are cluster-scoped; the others name theirs.
    super(scope, id, { labels: { ...props.chartLabels, ...PLATFORM_LABELS }, disableResourceNameHashes: true });
    new SharedClusterRoles(this, 'cluster-roles', { sandboxClusterRole: props.sandboxClusterRole, sharedVolumes: props.sharedVolumes });
    if (props.install) new PlatformInstall(this, 'install', props.install);
  }
}
