// How an Instance mounts SharedVolumes at API level e62be9e (docs/behaviour.md §16.7): a mirror claim
// per volume in its namespace, mounted into a Container's app container, and into a VM through
// virtiofs with cloud-init mounting it; read-only for a student as the Template says, read-write for
// a manager; an Instance mounting a volume that does not exist renders nothing and says why.
import { describe, expect, it } from 'vitest';
import { lab, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const lemon = JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'SharedVolume', metadata: { name: 'lemon', namespace: 'workspace-tea' }, spec: { prettyName: 'Lemon', size: '1Gi' } });
const MOUNT = { sharedVolume: { name: 'lemon', namespace: 'workspace-tea' }, mountPath: '/mnt/lemon', readOnly: true };

function renderOne(env: Record<string, unknown>, owner: 'john.doe' | 'mary.manager' = 'john.doe', withVolume = true) {
  const ns = owner === 'john.doe' ? 'tenant-john-doe' : 'tenant-mary-manager';
  const text = lab({
    env: { name: 'desk', mountMyDriveVolume: false, sharedVolumeMounts: [MOUNT], ...env },
    instanceMeta: { name: 'desk-1', namespace: ns },
    instance: { 'tenant.crownlabs.polito.it/TenantRef': { name: owner } },
    extra: withVolume ? lemon : undefined,
  });
  return render(text, testConfig({ apiLevel: 'e62be9e', mirrorStorageClass: 'mirrors' }), { schemas: true });
}

describe('§16.7 SharedVolume mounts of an Instance', () => {
  it("one mirror claim per volume in the Instance's namespace, naming the volume's claim across namespaces", () => {
    const r = renderOne({ environmentType: 'Container' });
    expect((r.get('PersistentVolumeClaim', 'lemon-desk-1-mirror', 'tenant-john-doe') as Any).spec).toEqual({
      accessModes: ['ReadWriteMany'],
      storageClassName: 'mirrors',
      resources: { requests: { storage: '1' } },
      dataSourceRef: { kind: 'PersistentVolumeClaim', name: 'shvol-lemon', namespace: 'workspace-tea' },
    });
    expect((r.get('PersistentVolumeClaim', 'lemon-desk-1-mirror') as Any).metadata.labels).toMatchObject({ 'crownlabs.polito.it/managed-by': 'instance', 'crownlabs.polito.it/volume-type': 'mirror' });
  });

  it("a Container mounts it into its app container, read-only for a student and read-write for a manager", () => {
    const pod = (owner: 'john.doe' | 'mary.manager') => (renderOne({ environmentType: 'Container' }, owner).objects.find((o) => o.kind === 'Deployment') as Any).spec.template.spec;
    const student = pod('john.doe');
    expect(student.volumes).toContainEqual({ name: 'lemon-desk-1-mirror', persistentVolumeClaim: { claimName: 'lemon-desk-1-mirror', readOnly: true } });
    expect(student.containers[0].volumeMounts).toContainEqual({ name: 'lemon-desk-1-mirror', mountPath: '/mnt/lemon', readOnly: true });
    const manager = pod('mary.manager');
    expect(manager.volumes).toContainEqual({ name: 'lemon-desk-1-mirror', persistentVolumeClaim: { claimName: 'lemon-desk-1-mirror' } });
    expect(manager.containers[0].volumeMounts).toContainEqual({ name: 'lemon-desk-1-mirror', mountPath: '/mnt/lemon' });
  });

  it('a VM gets it as a virtiofs filesystem that cloud-init mounts, with the same permissions', () => {
    const r = renderOne({ environmentType: 'VirtualMachine' });
    const vmi = (r.objects.find((o) => o.kind === 'VirtualMachineInstance') as Any).spec;
    expect(vmi.domain.devices.filesystems).toEqual([{ name: 'lemon-desk-1-mirror', virtiofs: {} }]);
    expect(vmi.volumes).toContainEqual({ name: 'lemon-desk-1-mirror', persistentVolumeClaim: { claimName: 'lemon-desk-1-mirror', readOnly: true } });
    const userdata = Buffer.from((r.get('Secret', 'desk-1', 'tenant-john-doe') as Any).data.userdata, 'base64').toString();
    expect(userdata).toContain(['mounts:', '    - - lemon-desk-1-mirror', '      - /mnt/lemon', '      - virtiofs', '      - ro,_netdev,user', '      - "0"', '      - "0"'].join('\n'));
    const manager = renderOne({ environmentType: 'VirtualMachine' }, 'mary.manager');
    expect(Buffer.from((manager.get('Secret', 'desk-1', 'tenant-mary-manager') as Any).data.userdata, 'base64').toString()).toContain('      - rw,_netdev,user');
  });

  it('a volume that does not exist renders none of the Instance, with an error naming it', () => {
    const r = renderOne({ environmentType: 'Container' }, 'john.doe', false);
    expect(r.objects.filter((o) => o.metadata.namespace === 'tenant-john-doe' && o.kind !== 'ResourceQuota')).toEqual(expect.not.arrayContaining([expect.objectContaining({ kind: 'Deployment' })]));
    expect(r.problems.map((p) => `${p.severity} ${p.field}: ${p.message}`)).toContain(
      'error spec.environmentList[0].sharedVolumeMounts: Template workspace-tea/tmpl: environment desk mounts SharedVolume workspace-tea/lemon, which does not exist',
    );
  });

  it('an environment without mounts renders no mirror claim and none of their fields', () => {
    const r = renderOne({ environmentType: 'VirtualMachine', sharedVolumeMounts: [] });
    expect(r.objects.filter((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.labels?.['composer.crownlabs.polito.it/parent-kind'] === 'Instance')).toEqual([]);
    expect((r.objects.find((o) => o.kind === 'VirtualMachineInstance') as Any).spec.domain.devices.filesystems).toBeUndefined();
  });
});
