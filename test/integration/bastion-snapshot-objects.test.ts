// The objects of the BastionChart (§12, §15.4) and of a SnapshotChart (§9.3), validated by the real
// API server: created with dryRun=All and strict field validation, nothing persisted.
import { Testing } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BastionChart } from '../../constructs/bastion/bastion-chart.ts';
import { SnapshotChart } from '../../constructs/snapshot/snapshot-chart.ts';
import type { Instance, InstanceSnapshot } from '../../src/inputs/types.ts';
import { snapshotTag } from '../../src/model/snapshot.ts';
import { createNamespace, deleteNamespace, dryRunCreate, type KubeObject } from './cluster.ts';

let ns: string;
beforeAll(async () => {
  ns = await createNamespace('render-check');
});
afterAll(async () => {
  if (ns) await deleteNamespace(ns);
});

describe('rendered bastion and snapshot objects pass the API server\'s validation', () => {
  it('BastionChart: ServiceAccount, ClusterRole, ClusterRoleBinding, Deployment, Service', async () => {
    const objects = new BastionChart(Testing.app(), 'b', { namespace: ns, sshdImage: 'crownlabs/ssh-bastion:v1', composerImage: 'crownlabs/composer:v1' }).toJson() as KubeObject[];
    const created = await dryRunCreate(objects);
    expect(created.map((o) => o.kind)).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Deployment', 'Service']);
  });

  it('SnapshotChart: the snapshot Job', async () => {
    const instance = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'vm.one', namespace: ns },
      spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: ns }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'john.doe' }, running: false },
    } as Instance;
    const snapshot = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'InstanceSnapshot',
      metadata: { name: 'snap', namespace: ns },
      spec: { instanceRef: { name: 'vm.one', namespace: ns }, imageName: 'my-image' },
    } as InstanceSnapshot;
    const config = { vmRegistry: 'registry.example', vmRegistrySecret: 'push-secret', containerExportImg: 'crownlabs/img-exporter', containerKanikoImg: 'gcr.io/kaniko-project/executor' };
    const objects = new SnapshotChart(Testing.app(), 's', { snapshot, instance, claimName: 'vm-one', config, tag: snapshotTag(new Date()) }).toJson() as KubeObject[];
    const [job] = await dryRunCreate(objects);
    expect((job as any).spec.template.spec.containers[0].args[1]).toMatch(/^--destination=registry\.example\/johndoe\/my-image:\d{8}t\d{6}$/);
  });
});
