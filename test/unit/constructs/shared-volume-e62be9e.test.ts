// SharedVolumes at API level e62be9e (docs/behaviour.md §16.7): the claim and Job of a volume, and
// what its Workspace renders for them; nothing of either at 2e8aeb9.
import { describe, expect, it } from 'vitest';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { groupApplications } from '../../../src/sinks/gitops.ts';
import { testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };
const ws = (name: string, quota: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name, labels: TARGET }, spec: { prettyName: name, quota } });
const sv = (name: string, namespace: string, size: string) => JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'SharedVolume', metadata: { name, namespace }, spec: { prettyName: name, size } });

function render(docs: string[], config = testConfig({ apiLevel: 'e62be9e' })) {
  const parsed = parseInputText(docs.join('\n---\n'), 'test.yaml', 'e62be9e');
  const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, 'e62be9e');
  const errors = [...parsed.problems, ...problems].filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`bad test input: ${JSON.stringify(errors)}`);
  const composition = compose(inventory, config);
  const sets = renderAll(composition);
  const objects: KubeObject[] = sets.flatMap((s) => s.objects);
  const get = (kind: string, name: string, namespace?: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace)) as Any;
  return { composition, sets, objects, get };
}

describe('§16.7 a SharedVolume set', () => {
  it("is the volume's claim, mirrorable into tenant namespaces, and its provisioning Job, in the volume's namespace", () => {
    const r = render([ws('tea', { cpu: 1, memory: '1Gi', instances: 1 }), sv('lemon', 'workspace-tea', '2048Mi')], testConfig({ apiLevel: 'e62be9e', sharedVolumeStorageClass: 'cephfs', volumeProvisioningImg: 'registry.example/busybox:1' }));
    const set = r.sets.find((s) => s.unit.parent.kind === 'SharedVolume')!;
    expect(set.unit.id).toBe('sharedvolumes/workspace-tea/lemon');
    expect(set.objects.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['PersistentVolumeClaim/workspace-tea/shvol-lemon', 'Job/workspace-tea/shvol-lemon-provision']);
    const claim = r.get('PersistentVolumeClaim', 'shvol-lemon');
    expect(claim.spec).toEqual({ accessModes: ['ReadWriteMany'], storageClassName: 'cephfs', resources: { requests: { storage: '2Gi' } } });
    expect(claim.metadata.labels).toMatchObject({ 'crownlabs.polito.it/managed-by': 'sharedvolume', 'crownlabs.polito.it/volume-type': 'sharedvolume' });
    expect(claim.metadata.annotations['pmp.crownlabs.polito.it/required-target-ns-labels']).toBe('crownlabs.polito.it/type=tenant');
    const job = r.get('Job', 'shvol-lemon-provision');
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    expect(job.spec.backoffLimit).toBe(3);
    expect(job.spec.template.spec.containers[0]).toMatchObject({ image: 'registry.example/busybox:1', command: ['chown', '-R', '1010:1010', '/media/mydrive'] });
    expect(job.spec.template.spec.volumes).toEqual([{ name: 'drive', persistentVolumeClaim: { claimName: 'shvol-lemon' } }]);
  });

  it('is not rendered in a namespace without the target label, with a warning naming it; nor in gitops', () => {
    const r = render([ws('tea', { cpu: 1, memory: '1Gi', instances: 1 }), sv('lemon', 'workspace-tea', '1Gi'), sv('stray', 'elsewhere', '1Gi')]);
    expect(r.composition.units.map((u) => u.id)).toEqual(['workspaces/tea', 'sharedvolumes/workspace-tea/lemon']);
    expect(r.composition.problems.map((p) => `${p.name}: ${p.message}`)).toContain('elsewhere/stray: skipped: namespace elsewhere lacks the target label crownlabs.polito.it/operator-selector=production');
    const apps = groupApplications(r.sets.map((s) => ({ unit: s.unit, objectCount: s.objects.length })) as Any, 500);
    expect(apps.map((a) => a.name)).toEqual(['crownlabs-workspace-tea']);
  });
});

describe("§16.7 a Workspace's set for its SharedVolumes", () => {
  it("binds the managers to manage them, and bounds their claims by the Workspace's disk quota", () => {
    const r = render([ws('tea', { cpu: 1, memory: '1Gi', disk: '20Gi', instances: 1 })]);
    expect(r.get('RoleBinding', 'crownlabs-manage-sharedvolumes', 'workspace-tea')).toMatchObject({
      roleRef: { kind: 'ClusterRole', name: 'crownlabs-manage-sharedvolumes' },
      subjects: [{ kind: 'Group', name: 'kubernetes:workspace-tea:manager' }],
    });
    expect(r.get('ResourceQuota', 'crownlabs-resource-quota', 'workspace-tea').spec).toEqual({ hard: { 'requests.storage': '20Gi' } });
  });

  it('bounds nothing without a disk quota', () => {
    const r = render([ws('tea', { cpu: 1, memory: '1Gi', instances: 1 })]);
    expect(r.get('RoleBinding', 'crownlabs-manage-sharedvolumes', 'workspace-tea')).toBeDefined();
    expect(r.get('ResourceQuota', 'crownlabs-resource-quota', 'workspace-tea')).toBeUndefined();
  });

  it('renders neither at 2e8aeb9', () => {
    const parsed = parseInputText(ws('tea', { cpu: 1, memory: '1Gi', instances: 1 }), 'test.yaml');
    const { inventory } = Inventory.fromObjects(parsed.objects);
    const objects = renderAll(compose(inventory, testConfig())).flatMap((s) => s.objects);
    expect(objects.filter((o) => o.kind === 'ResourceQuota' || o.metadata.name === 'crownlabs-manage-sharedvolumes')).toEqual([]);
  });
});
