import { MYDRIVE_MOUNT_PATH, type NfsShare } from '../../src/model/mydrive.ts';

export const MYDRIVE_VOLUME = 'mydrive';

/** The NFS volume of a tenant's MyDrive, mounted read-write (the default) by Container/Standalone pods (docs/behaviour.md §7.5). */
export function myDriveVolume(nfs: NfsShare) {
  // readOnly false is the default; the API server would drop it (and so does upstream's encoder).
  return { name: MYDRIVE_VOLUME, nfs: { server: nfs.server, path: nfs.path } };
}

export function myDriveVolumeMount() {
  return { name: MYDRIVE_VOLUME, mountPath: MYDRIVE_MOUNT_PATH };
}
