// What the controller's caches keep (#16, memory): PVs projected to the fields read, and the
// Inventory's copy of an input object sharing its strings with the cached one.
import { describe, expect, it } from 'vitest';
import { cloneJson, persistentVolumeProjection } from '../../../src/controller/caches.ts';
import { Informer, type CachedObject } from '../../../src/kube/informer.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { myDriveShare } from '../../../src/controller/mydrive-share.ts';
import { defaultConfig } from '../../../src/config/config.ts';

const pv: CachedObject = {
  apiVersion: 'v1',
  kind: 'PersistentVolume',
  metadata: {
    name: 'pvc-123',
    uid: 'u-1',
    resourceVersion: '42',
    annotations: { 'pv.kubernetes.io/provisioned-by': 'cephfs.csi.ceph.com' },
    finalizers: ['kubernetes.io/pv-protection'],
  },
  spec: {
    accessModes: ['ReadWriteMany'],
    capacity: { storage: '10Gi' },
    claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: 'mydrive', name: 'alice-drive', uid: 'c-1', resourceVersion: '7' },
    csi: { driver: 'cephfs.csi.ceph.com', volumeHandle: 'h', volumeAttributes: { server: 'nfs', clusterID: 'c1', share: '/volumes/alice' } },
    mountOptions: ['nfsvers=4.1'],
    persistentVolumeReclaimPolicy: 'Retain',
    storageClassName: 'rook-nfs',
  },
  status: { phase: 'Bound' },
};

describe('PersistentVolume projection', () => {
  it('keeps only the claimRef and the CSI volume attributes (and the identity)', () => {
    expect(persistentVolumeProjection(structuredClone(pv))).toEqual({
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pvc-123', namespace: undefined, uid: 'u-1', resourceVersion: '42' },
      spec: { claimRef: { namespace: 'mydrive', name: 'alice-drive' }, csi: { volumeAttributes: { server: 'nfs', clusterID: 'c1', share: '/volumes/alice' } } },
    });
    expect(persistentVolumeProjection({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'bare' } }).spec).toEqual({});
  });

  it('the informer keeps the projection, and the MyDrive share is still found through it', async () => {
    const client = {
      path: () => '/api/v1/persistentvolumes',
      request: async () => ({ metadata: { resourceVersion: '50' }, items: [structuredClone(pv)] }),
      watch: () => ({ stop: () => undefined }),
    } as unknown as KubeClient;
    const pvs = new Informer(client, { apiVersion: 'v1', kind: 'PersistentVolume', transform: persistentVolumeProjection });
    pvs.start();
    await pvs.synced;
    const kept = pvs.get(undefined, 'pvc-123')!;
    expect(kept.status).toBeUndefined();
    expect(JSON.stringify(kept)).not.toContain('mountOptions');
    const config = { ...defaultConfig(), mydrivePvcsNamespace: 'mydrive' };
    const pvc = { metadata: { name: 'alice-drive' }, spec: { volumeName: 'pvc-123' }, status: { phase: 'Bound' } };
    const caches = { persistentVolumes: pvs, child: () => ({ get: () => pvc }) };
    const tenant = { metadata: { name: 'alice' } };
    expect(myDriveShare({ caches: caches as never, config }, tenant as never)).toEqual({ server: 'nfs.c1', path: '/volumes/alice' });
  });
});

describe('cloneJson', () => {
  it('copies objects and lists (defaults applied to the copy never reach the cache) and equals the original', () => {
    const obj = JSON.parse(JSON.stringify({ metadata: { name: 'a', labels: { x: 'y' } }, spec: { list: [{ a: 1 }, 'b', null, true], n: 0 } }));
    const copy = cloneJson(obj);
    expect(copy).toEqual(obj);
    copy.spec.list[0].a = 2;
    copy.spec.list.push('c');
    copy.metadata.labels.z = 'w';
    expect(obj).toEqual({ metadata: { name: 'a', labels: { x: 'y' } }, spec: { list: [{ a: 1 }, 'b', null, true], n: 0 } });
  });
});
