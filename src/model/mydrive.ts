import type { Secret } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { canon, myDrivePvcName } from './naming.ts';

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
