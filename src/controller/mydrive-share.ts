/* The MyDrive share a Tenant's set and its Instances' sets are rendered with (one resolver for both). */
import type { Tenant } from '../inputs/types.ts';
import { nfsShareFromConfig, nfsShareFromVolumeAttributes, type NfsShare } from '../model/mydrive.ts';
import { myDrivePvcName } from '../model/naming.ts';
import type { ControllerContext } from './context.ts';

/**
 * The NFS share of the tenant's MyDrive: read from the PV its PVC is bound to (docs/behaviour.md §5.4 row 9);
 * until it is bound, the configured share if the operator set one (as when rendering from files).
 * Tenant and Instance reconciles both use it, so an Instance mounts what its tenant's
 * mydrive-info says.
 */
export function myDriveShare(ctx: Pick<ControllerContext, 'caches' | 'config'>, tenant: Tenant): NfsShare | undefined {
  return boundShare(ctx, tenant) ?? nfsShareFromConfig(ctx.config, tenant.metadata.name);
}

function boundShare(ctx: Pick<ControllerContext, 'caches' | 'config'>, tenant: Tenant): NfsShare | undefined {
  const pvc = ctx.caches.child('v1', 'PersistentVolumeClaim')?.get(ctx.config.mydrivePvcsNamespace, myDrivePvcName(tenant.metadata.name));
  const status = pvc?.status as { phase?: string } | undefined;
  const volumeName = (pvc?.spec as { volumeName?: string } | undefined)?.volumeName;
  if (status?.phase !== 'Bound' || !volumeName) return undefined;
  const pv = ctx.caches.persistentVolumes.get(undefined, volumeName);
  return nfsShareFromVolumeAttributes((pv?.spec as { csi?: { volumeAttributes?: Record<string, string> } } | undefined)?.csi?.volumeAttributes);
}
