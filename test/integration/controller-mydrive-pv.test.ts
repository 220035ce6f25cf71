// The apply-controller with the bound PV as the only source of a tenant's MyDrive share
// (`mydriveNfsServerName` empty), PVs reserved beforehand and bound by kube-controller-manager as
// the controller creates the claims (#15): every tenant gets its mydrive-info, one without Instances
// too, and an Instance mounting MyDrive is reconciled to a status without a crash; a claim bound
// before the controller reads the answer to its creation (through a proxy that delays that answer)
// still gives its tenant mydrive-info.
import { isDeepStrictEqual } from 'node:util';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { myDrivePvcName, tenantNamespaceName } from '../../src/model/naming.ts';
import { adminKubeConfig, getObject, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, deleteNamespaceWithPvcs, lab, labConfig, runController, SELECTOR, shardName, type RunningController } from './controller-support.ts';
import { createMyDriveVolumes, removeMyDriveVolumes, type MyDriveClaim } from './mydrive-volumes.ts';
import { delayFirstAnswer, startApiProxy, type ApiProxy } from './api-proxy.ts';

describe('controller: MyDrive share from the bound PV only', () => {
  const shard = shardName('cmp');
  const l = lab(shard);
  const config = labConfig(shard, { mydriveNfsServerName: '' });
  const pvOwner = `${shard}-mydrive-pv`;
  const logs: string[] = [];
  const outcomes: { key: string; outcome: string }[] = [];
  let ctl: RunningController;
  const [alice, bob] = l.tenants;
  // More tenants without Instances, created together: the claims of many are bound while the
  // controller is busy (the order of watch events and apply answers varies, as in a lab).
  const extra = Array.from({ length: 16 }, (_, i) => `${shard}.user${i}`);
  const tenants = [alice, bob, ...extra];
  for (const name of extra) {
    l.inputs.cluster.push({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name, labels: { [SELECTOR]: shard } },
      spec: { firstName: 'U', lastName: name, email: `${name}@example.org`, lastLogin: new Date().toISOString(), workspaces: [{ name: l.workspace, role: 'user' }] },
    });
  }
  const claims: MyDriveClaim[] = tenants.map((t, i) => ({ claim: myDrivePvcName(t), attributes: { server: `nfs-${i}`, clusterID: 'rook', share: `/volumes/${shard}-${i}` } }));
  // Only the Container flavour, mounting MyDrive; bob has no Instance and logged in now (namespace kept).
  const template = l.inputs.namespaced.find((o) => o.kind === 'Template' && o.metadata.name === 'desk')!;
  const instance = l.inputs.namespaced.find((o) => o.kind === 'Instance' && o.metadata.name === 'desk-1')!;
  (template.spec as { environmentList: { mountMyDriveVolume: boolean }[] }).environmentList[0].mountMyDriveVolume = true;
  (l.inputs.cluster.find((o) => o.metadata.name === bob)!.spec as Record<string, unknown>).lastLogin = new Date().toISOString();

  beforeAll(async () => {
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    // As in a lab: the provisioner's volumes exist before the controller creates the claims.
    await createMyDriveVolumes(adminKubeConfig(), config, claims, pvOwner);
    for (const o of l.inputs.cluster) await create(o);
    const logger = pino({ level: 'debug' }, { write: (s: string) => void logs.push(s) });
    ctl = await runController(config, { logger, onReconcile: (key, outcome) => void outcomes.push({ key, outcome }) });
    // Refused until the controller has created the namespaces and kube-controller-manager has
    // counted the tenant namespace's new ResourceQuota.
    for (const o of [template, instance]) {
      await waitFor(
        async () => {
          try {
            await create(o);
            return true;
          } catch {
            return false;
          }
        },
        { timeoutMs: 60_000, message: `${o.kind} created` },
      );
    }
  }, 120_000);
  afterAll(async () => {
    await ctl?.handle.stop();
    await cleanupLab(l);
    for (const name of extra) await deleteNamespaceWithPvcs(tenantNamespaceName(name));
    await removeMyDriveVolumes(adminKubeConfig(), pvOwner);
  });

  const secretOf = async (ns: string) => {
    const s = await getObject<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: ns } });
    return s?.data && Object.fromEntries(Object.entries(s.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
  };

  it('every tenant, those without Instances too, gets mydrive-info from the PV its PVC is bound to', async () => {
    for (const [i, tenant] of tenants.entries()) {
      const ns = tenantNamespaceName(tenant);
      const want = { 'server-name': `nfs-${i}.rook`, path: `/volumes/${shard}-${i}` };
      await waitFor(async () => isDeepStrictEqual(await secretOf(ns), want), { timeoutMs: 60_000, message: `mydrive-info of ${tenant} from its PV` });
      const pvc = await getObject<any>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: myDrivePvcName(tenant), namespace: config.mydrivePvcsNamespace } });
      expect(pvc.status.phase).toBe('Bound');
    }
  });

  it('an Instance mounting MyDrive gets its children and a status, and no reconcile crashes', async () => {
    const ref = { apiVersion: instance.apiVersion, kind: 'Instance', metadata: instance.metadata };
    await waitFor(async () => (await getObject<any>(ref))?.status?.phase, { timeoutMs: 60_000, message: 'Instance status phase' });
    const deployment = await getObject<any>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    const nfs = deployment.spec.template.spec.volumes.find((v: any) => v.nfs)?.nfs;
    expect(nfs).toEqual(expect.objectContaining({ server: 'nfs-0.rook', path: `/volumes/${shard}-0` }));
    await ctl.handle.idle();
    expect(logs.filter((s) => /TypeError|Cannot read properties/.test(s))).toEqual([]);
    const key = `Instance/${l.tenantNs}/desk-1`;
    expect(outcomes.filter((o) => o.key === key).at(-1)?.outcome).toBe('success');
  });

  it('an Instance reconciled while its mydrive-info is not cached yet mounts the share of the bound PV', async () => {
    // The window between the tenant's write of mydrive-info and its watch event, held open: the
    // Secret watch stopped and the Secret out of the Inventory; the PV and PVC caches still hold the share.
    ctl.handle.caches.mydriveSecrets.stop();
    ctl.handle.caches.inventory.remove({ kind: 'Secret', metadata: { name: 'mydrive-info', namespace: l.tenantNs } });
    const key = `Instance/${l.tenantNs}/desk-1`;
    const before = outcomes.length;
    ctl.handle.queue.add(key);
    await waitFor(() => outcomes.slice(before).some((o) => o.key === key), { message: 'Instance reconciled' });
    await ctl.handle.idle();
    expect(logs.filter((s) => /TypeError|Cannot read properties/.test(s))).toEqual([]);
    expect(outcomes.slice(before).filter((o) => o.key === key).map((o) => o.outcome)).toEqual(['success']);
    const deployment = await getObject<any>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    expect(deployment.spec.template.spec.volumes.find((v: any) => v.nfs)?.nfs).toEqual(expect.objectContaining({ server: 'nfs-0.rook' }));
  });
});

describe('controller: a MyDrive claim bound before the answer to its creation is read', () => {
  const shard = shardName('cmq');
  const l = lab(shard);
  const config = labConfig(shard, { mydriveNfsServerName: '' });
  const pvOwner = `${shard}-mydrive-late`;
  const bob = l.tenants[1];
  const claim = myDrivePvcName(bob);
  const pvcPath = `/api/v1/namespaces/${config.mydrivePvcsNamespace}/persistentvolumeclaims/${claim}`;
  let proxy: ApiProxy;
  let ctl: RunningController;
  (l.inputs.cluster.find((o) => o.metadata.name === bob)!.spec as Record<string, unknown>).lastLogin = new Date().toISOString();

  beforeAll(async () => {
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    await createMyDriveVolumes(adminKubeConfig(), config, [{ claim, attributes: { server: 'nfs-late', clusterID: 'rook', share: `/volumes/${shard}` } }], pvOwner);
    proxy = await startApiProxy();
    // The answer to the apply that creates bob's claim is read only once kube-controller-manager
    // has bound the claim and the controller's watch has had time to bring every step of it.
    delayFirstAnswer(proxy, 'PATCH', pvcPath, async () => {
      await waitFor(async () => (await getObject<any>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: config.mydrivePvcsNamespace } }))?.status?.phase === 'Bound', {
        message: 'claim Bound',
      });
      await new Promise((r) => setTimeout(r, 1000));
    });
    ctl = await runController(config, { kubeConfig: proxy.kubeConfig });
    for (const o of l.inputs.cluster.filter((o) => o.kind === 'Workspace' || o.metadata.name === bob)) await create(o);
  });
  afterAll(async () => {
    await ctl?.handle.stop();
    await proxy?.close();
    await cleanupLab(l);
    await removeMyDriveVolumes(adminKubeConfig(), pvOwner);
  });

  it('the tenant still gets its mydrive-info from the PV', async () => {
    const secret = await waitFor(
      async () => {
        const s = await getObject<KubeObject & { data?: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: tenantNamespaceName(bob) } });
        return s?.data;
      },
      { timeoutMs: 30_000, message: `mydrive-info of ${bob}` },
    );
    expect(Buffer.from(secret['server-name'], 'base64').toString()).toBe('nfs-late.rook');
    expect(proxy.log.some((r) => r.method === 'PATCH' && r.path === pvcPath)).toBe(true);
  });
});
