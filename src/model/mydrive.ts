import type { Secret } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { canon, myDrivePvcName } from './naming.ts';
import type { ApiLevel } from '../inputs/api-level.ts';

/** Where MyDrive appears inside containers and VMs. */
export const MYDRIVE_MOUNT_PATH = '/media/mydrive';

/** Name of the Secret holding a tenant's NFS share (docs/behaviour.md §3, §5.4 row 9). */
export const MYDRIVE_INFO_SECRET = 'mydrive-info';

export interface NfsShare {
  server: string;
  path: string;
}

/**
 * The NFS share of a tenant's MyDrive when rendering without a cluster: there is no bound PV to
 * read, so the server and a per-tenant path come from configuration. Undefined when not configured.
 */
export function nfsShareFromConfig(config: ComposerConfig, tenantName: string): NfsShare | undefined {
  if (!config.mydriveNfsServerName) return undefined;
  const path = config.mydriveNfsPathTemplate.replaceAll('{tenant}', canon(tenantName)).replaceAll('{pvc}', myDrivePvcName(tenantName));
  return { server: config.mydriveNfsServerName, path };
}

/**
 * The NFS share of a bound PV, as upstream reads it (docs/behaviour.md §5.4 row 9): server name is
 * `<server>.<clusterID>` of the CSI volume attributes, path is its `share`.
 */
export function nfsShareFromVolumeAttributes(attrs: Record<string, string> | undefined): NfsShare | undefined {
  if (!attrs?.server || !attrs.share) return undefined;
  return { server: `${attrs.server}.${attrs.clusterID ?? ''}`, path: attrs.share };
}

/** Reads `server-name` and `path` of a `mydrive-info` Secret; undefined when either is missing. */
export function nfsShareFromSecret(secret: Secret | undefined): NfsShare | undefined {
  if (!secret) return undefined;
  const read = (key: string) => {
    const plain = secret.stringData?.[key];
    if (plain !== undefined) return plain;
    const encoded = secret.data?.[key];
    return encoded === undefined ? undefined : Buffer.from(encoded, 'base64').toString('utf8');
  };
  const server = read('server-name');
  const path = read('path');
  return server && path ? { server, path } : undefined;
}

/**
 * How Instances reach a tenant's MyDrive at each API level (docs/behaviour.md §16.8): over NFS,
 * from the `mydrive-info` Secret (2e8aeb9), or through a mirror of the MyDrive claim in the
 * personal namespace, which the PVC mirror provisioner binds to the same volume (e62be9e).
 */
export const MYDRIVE_ACCESS: Readonly<Record<ApiLevel, 'nfs' | 'mirror'>> = { '2e8aeb9': 'nfs', e62be9e: 'mirror' };

/** The mirror of a tenant's MyDrive claim in its personal namespace: upstream's name, also the pod's volume name. */
export function myDriveMirrorName(tenantName: string): string {
  const pvc = myDrivePvcName(tenantName);
  return `${pvc.length > 55 ? pvc.slice(pvc.length - 55) : pvc}-mirror`;
}

/** Read by the PVC mirror provisioner: only the tenant's own namespace may mirror its MyDrive. */
export function myDriveMirrorAuthorization(tenantName: string): string {
  return `crownlabs.polito.it/type=tenant,crownlabs.polito.it/name=${tenantName}`;
}
