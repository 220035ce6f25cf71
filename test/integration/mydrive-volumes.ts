// MyDrive PersistentVolumes for the test clusters. In a lab, Rook's NFS CSI driver (ceph-csi's NFS
// driver) provisions each MyDrive PVC; the test cluster runs no provisioner for the MyDrive class
// (`mydrivePvcsStorageClassName`), so the volumes are created beforehand, each reserved for its
// claim (`spec.claimRef` with namespace and name, as an administrator reserves a static PV) and with
// the claim's class, access mode and size. kube-controller-manager's PV binder binds each to its
// claim when the claim appears (it checks class, access modes and size); no test writes a PVC or
// PV status. Reserved rather than a free pool: the binder would hand a pool's volumes out in any
// order, and a tenant's share must be its own.
import type { KubeConfig } from '@kubernetes/client-node';
import type { ComposerConfig } from '../../src/config/config.ts';
import { nfsShareFromConfig } from '../../src/model/mydrive.ts';
import { myDrivePvcName } from '../../src/model/naming.ts';
import { ApiError, listObjects, rest, uniqueName, waitFor, type KubeObject } from './cluster.ts';

/** The name Rook gives ceph-csi's NFS driver (`<operator namespace>.nfs.csi.ceph.com`). */
export const MYDRIVE_CSI_DRIVER = 'rook-ceph.nfs.csi.ceph.com';
/** Marks the volumes of one owner (a test file), so that it can remove its own, even an earlier run's. */
export const MYDRIVE_VOLUME_LABEL = 'crownlabs.test/mydrive-volumes';

/**
 * The CSI volume attributes the controller reads from the bound PV (docs/behaviour.md §5.4 row 9:
 * `server-name` = `<server>.<clusterID>`, `path` = `share`), named as ceph-csi's NFS driver writes them.
 */
export interface MyDriveVolumeAttributes {
  /** The NFS server: the StorageClass's `server` parameter (Rook's NFS Service). */
  server: string;
  /** The StorageClass's `clusterID`: the namespace of Rook's Ceph cluster (so `<server>.<clusterID>` resolves). */
  clusterID: string;
  /** The export path (ceph-csi: `/<volume id>`). */
  share: string;
}

export interface MyDriveClaim {
  /** Name of the MyDrive PVC (in `config.mydrivePvcsNamespace`). */
  claim: string;
  attributes: MyDriveVolumeAttributes;
}

/**
 * The attributes that give a tenant the share `crownlabs gitops` renders from configuration
 * (`mydriveNfsServerName` split at its first dot into server and clusterID; the path template), so
 * that the apply-controller, which reads the PV, and the tree agree.
 */
export function configuredAttributes(config: ComposerConfig, tenantName: string): MyDriveClaim {
  const share = nfsShareFromConfig(config, tenantName);
  const dot = share?.server.indexOf('.') ?? -1;
  if (!share || dot < 1) throw new Error(`mydriveNfsServerName must be <server>.<clusterID>, not ${JSON.stringify(config.mydriveNfsServerName)}`);
  return { claim: myDrivePvcName(tenantName), attributes: { server: share.server.slice(0, dot), clusterID: share.server.slice(dot + 1), share: share.path } };
}

/** A PersistentVolume reserved for the MyDrive PVC `claim`, as the NFS provisioner would create it. */
export function myDriveVolume(config: ComposerConfig, name: string, c: MyDriveClaim, owner: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name, labels: { [MYDRIVE_VOLUME_LABEL]: owner } },
    spec: {
      capacity: { storage: config.mydrivePvcsSize },
      accessModes: ['ReadWriteMany'],
      storageClassName: config.mydrivePvcsStorageClassName,
      volumeMode: 'Filesystem',
      // Retain: nothing here could delete the share; removeMyDriveVolumes deletes the PV.
      persistentVolumeReclaimPolicy: 'Retain',
      claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: config.mydrivePvcsNamespace, name: c.claim },
      csi: { driver: MYDRIVE_CSI_DRIVER, volumeHandle: name, volumeAttributes: { ...c.attributes } },
    },
  };
}

/**
 * Creates a volume for each claim (before the claims exist, or while they are Pending) and
 * returns the PV name of each claim. `owner` labels them for removeMyDriveVolumes.
 */
export async function createMyDriveVolumes(kc: KubeConfig, config: ComposerConfig, claims: readonly MyDriveClaim[], owner: string): Promise<Map<string, string>> {
  const c = rest(kc);
  const names = new Map<string, string>();
  for (const claim of claims) {
    // A unique name: a Released volume of an earlier run may still be there, reserved for a claim that is gone.
    const name = uniqueName(`mydrive-${claim.claim}`.slice(0, 200));
    await c.request('POST', '/api/v1/persistentvolumes', { body: myDriveVolume(config, name, claim, owner) });
    names.set(claim.claim, name);
  }
  return names;
}

/** Deletes the volumes `owner` created (once their claims are gone kube-controller-manager lets them go) and waits for them. */
export async function removeMyDriveVolumes(kc: KubeConfig, owner: string, opts: { wait?: boolean } = {}): Promise<void> {
  const c = rest(kc);
  const selector = `${MYDRIVE_VOLUME_LABEL}=${owner}`;
  for (const pv of await listObjects<KubeObject>('v1', 'PersistentVolume', { kubeConfig: kc, labelSelector: selector })) {
    await c.request('DELETE', `/api/v1/persistentvolumes/${pv.metadata.name}`).catch((e) => {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    });
  }
  if (opts.wait ?? true) {
    await waitFor(async () => (await listObjects<KubeObject>('v1', 'PersistentVolume', { kubeConfig: kc, labelSelector: selector })).length === 0, {
      timeoutMs: 60_000,
      message: `PersistentVolumes ${selector} deleted`,
    });
  }
}
