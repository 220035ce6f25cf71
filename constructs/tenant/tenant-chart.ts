import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import type { Tenant } from '../../src/inputs/types.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { tenantCommonLabels } from '../../src/model/labels.ts';
import type { NfsShare } from '../../src/model/mydrive.ts';
import { myDrivePvcName, sandboxNamespaceName, tenantManageRoleName, tenantNamespaceName } from '../../src/model/naming.ts';
import { tenantNamespaceLabels, type QuotaValues } from '../../src/model/tenant-plan.ts';
import { MyDrive } from './my-drive.ts';
import { Sandbox } from './sandbox.ts';
import { TenantNamespace } from './tenant-namespace.ts';
import { TenantNetworkPolicies } from './tenant-network-policies.ts';
import { TenantQuota } from './tenant-quota.ts';
import { TenantRbac } from './tenant-rbac.ts';

export interface TenantChartProps {
  readonly tenant: Tenant;
  readonly config: ComposerConfig;
  readonly quota: QuotaValues;
  /** False when the keep-alive rule drops the personal namespace (controller only, docs/behaviour.md §5.3 step 5). */
  readonly keepPersonalNamespace: boolean;
  /**
   * The NFS share behind the MyDrive PVC (configuration when rendering files, the bound PV in the controller).
   * @default unknown: the `mydrive-info` Secret is left out until the PVC is bound
   */
  readonly myDriveShare?: NfsShare;
  /**
   * Instances reach MyDrive through a mirror claim (the API level's MYDRIVE_ACCESS).
   * @default false: over NFS
   */
  readonly myDriveMirror?: boolean;
  /**
   * Labels on every object besides the CrownLabs ones (ours: parent and manager).
   * @default none: only the CrownLabs labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** Every object of one Tenant (docs/behaviour.md §5.4, §5.5), across the namespaces they live in. */
export class TenantChart extends Chart {
  constructor(scope: Construct, id: string, props: TenantChartProps) {
    super(scope, id, { labels: props.chartLabels, disableResourceNameHashes: true });
    const { tenant, config } = props;
    const name = tenant.metadata.name;
    const namespace = tenantNamespaceName(name);
    const labels = tenantCommonLabels(config.targetLabel);
    const keep = props.keepPersonalNamespace;
    if (keep) {
      new TenantNamespace(this, 'namespace', { name: namespace, labels: tenantNamespaceLabels(tenant, config) });
      new TenantQuota(this, 'quota', { namespace, labels, quota: props.quota });
    }
    new TenantRbac(this, 'rbac', {
      tenantName: name,
      namespace: keep ? namespace : undefined,
      personalWorkspace: tenant.spec.personalWorkspace !== undefined,
      manageRoleName: tenantManageRoleName(name),
      labels,
    });
    if (keep) new TenantNetworkPolicies(this, 'network-policies', { namespace, labels });
    new MyDrive(this, 'mydrive', {
      pvcName: myDrivePvcName(name),
      pvcNamespace: config.mydrivePvcsNamespace,
      size: config.mydrivePvcsSize,
      storageClassName: config.mydrivePvcsStorageClassName,
      tenantNamespace: keep ? namespace : undefined,
      labels,
      share: props.myDriveShare,
      ...(props.myDriveMirror ? { mirror: { tenantName: name, storageClassName: config.mirrorStorageClass, provisioningImage: config.volumeProvisioningImg } } : {}),
    });
    if (tenant.spec.createSandbox) {
      new Sandbox(this, 'sandbox', { tenantName: name, namespace: sandboxNamespaceName(name), clusterRole: config.sandboxClusterRole, podSecurity: config.sandboxPodSecurity });
    }
  }
}
