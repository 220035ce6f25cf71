// A Tenant without the target label, and an Instance in its personal namespace: the controller, like
// synth and gitops (the same composition from files), renders nothing for that Instance.
import { afterAll, expect, it } from 'vitest';
import { Inventory } from '../../src/inputs/inventory.ts';
import { checkObject, type SourcedObject } from '../../src/inputs/parse.ts';
import type { Problem } from '../../src/inputs/problems.ts';
import { compose } from '../../src/compose/compose.ts';
import { getObject, listObjects, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, deleteNamespaceWithPvcs, lab, labConfig, patch, runController, SELECTOR, shardName, type RunningController } from './controller-support.ts';

const shard = shardName('skip');
const l = lab(shard);
const config = labConfig(shard);
const carol = `${shard}.carol`;
const carolNs = `tenant-${shard}-carol`;
const tenant: KubeObject = {
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: { name: carol, labels: { [SELECTOR]: `${shard}-elsewhere` } },
  spec: { firstName: 'Carol', lastName: 'Skipped', email: 'carol@example.org', workspaces: [{ name: l.workspace, role: 'user' }], publicKeys: [] },
};
const instance: KubeObject = {
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name: 'desk-carol', namespace: carolNs },
  spec: {
    running: true,
    'template.crownlabs.polito.it/TemplateRef': { name: 'desk', namespace: l.workspaceNs },
    'tenant.crownlabs.polito.it/TenantRef': { name: carol },
  },
};
let ctl: RunningController | undefined;

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
  await deleteNamespaceWithPvcs(carolNs);
  for (const step of [() => patch(tenant, { metadata: { finalizers: null } }), async () => rest().request('DELETE', await rest().resourcePath(tenant.apiVersion, tenant.kind, undefined, tenant.metadata.name))]) {
    try {
      await step();
    } catch {
      /* gone */
    }
  }
}, 120_000);

function inventoryOf(objects: KubeObject[]): Inventory {
  const sourced: SourcedObject[] = [];
  const problems: Problem[] = [];
  for (const o of objects) checkObject(structuredClone(o), { file: 'lab.yaml', document: 1 }, problems, sourced);
  return Inventory.fromObjects(sourced).inventory;
}

it("an Instance in a skipped Tenant's namespace: no sink renders it", async () => {
  // From files (synth, gitops): the namespace is not in the input, nothing creates it.
  const files = compose(inventoryOf([...l.inputs.cluster, tenant, ...l.inputs.namespaced, instance]), config);
  expect(files.units.map((u) => u.id).filter((id) => id.includes(carolNs) || id.includes(carol))).toEqual([]);
  expect(files.units.some((u) => u.id.includes(l.tenantNs))).toBe(true);
  expect(files.problems.find((p) => p.name === `${carolNs}/desk-carol`)?.message).toMatch(/^skipped: its namespace belongs to Tenant .*carol, which is skipped/);

  // The controller: the Instance can exist only in a namespace that does (made here, as by hand).
  for (const o of l.inputs.cluster) await create(o);
  await create(tenant);
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: carolNs } });
  ctl = await runController(config);
  await waitFor(async () => !!(await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })) && !!(await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })), { message: 'lab namespaces' });
  for (const o of l.inputs.namespaced) await create(o);
  await create(instance);
  // The lab's own container Instance gets its Deployment: the controller has reconciled Instances.
  await waitFor(async () => (await listObjects('apps/v1', 'Deployment', { namespace: l.tenantNs })).length > 0, { timeoutMs: 90_000, message: "the lab's Deployments" });
  await waitFor(() => ctl!.reconciled.some((k) => k.includes('desk-carol')), { timeoutMs: 30_000, message: 'desk-carol reconciled' });
  for (const [apiVersion, kind] of [['apps/v1', 'Deployment'], ['v1', 'Service'], ['networking.k8s.io/v1', 'Ingress'], ['v1', 'PersistentVolumeClaim']] as const) {
    expect(await listObjects(apiVersion, kind, { namespace: carolNs }), kind).toEqual([]);
  }
  // The Tenant itself is not rendered either: its namespace has none of our children.
  const ns = await getObject<{ metadata: { labels?: Record<string, string> } }>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: carolNs } });
  expect(ns?.metadata.labels?.[SELECTOR]).toBeUndefined();
}, 240_000);
