// The controller refuses what a tenant must not get, and its status says only what it applied:
// - an Instance named like an object of its Tenant's set (`mydrive-info`, created before the MyDrive
//   PV binds) does not block the Tenant's set: the Tenant takes the object, its quota is applied
//   and reported as it is live, and the Instance is the one refused;
// - an Instance of a Template of a workspace its Tenant is not enrolled in renders nothing, gets
//   TenantNotEnrolled and no frozen Template spec, until the Tenant is enrolled;
// - a namespace CrownLabs did not make, named like a new Tenant's, is not adopted (nor deleted with
//   the Tenant) unless an administrator annotates it composer.crownlabs.polito.it/adopt=true.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADOPT_ANNOTATION } from '../../src/controller/adoption.ts';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { myDrivePvcName } from '../../src/model/naming.ts';
import { BIN } from '../support/cli.ts';
import { adminKubeConfig, adminKubeConfigPath, getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, deleteNamespaceWithPvcs, lab, labConfig, patch, runController, SELECTOR, shardName, type RunningController } from './controller-support.ts';
import { createMyDriveVolumes, removeMyDriveVolumes } from './mydrive-volumes.ts';

const shard = shardName('grd');
const l = lab(shard);
// The share comes from the bound PV only: until it binds, the Tenant's set renders no mydrive-info.
const config = labConfig(shard, { mydriveNfsServerName: '' });
const [alice] = l.tenants;
const pvOwner = `${shard}-guards`;
const otherWs = `${shard}-oth`;
const otherWsNs = `workspace-${otherWs}`;
const carol = `${shard}.carol`;
const dave = `${shard}.dave`;
let ctl: RunningController;

const T = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant' };
const tenantRef = (name: string) => ({ ...T, metadata: { name } });
const nsRef = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const template = (name: string) => l.inputs.namespaced.find((o) => o.kind === 'Template' && o.metadata.name === name)!;
const instance = (name: string, templateName: string, templateNs = l.workspaceNs): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name, namespace: l.tenantNs },
  spec: {
    running: true,
    'template.crownlabs.polito.it/TemplateRef': { name: templateName, namespace: templateNs },
    'tenant.crownlabs.polito.it/TenantRef': { name: alice },
  },
});
const newTenant = (name: string): KubeObject => ({
  ...T,
  metadata: { name, labels: { [SELECTOR]: shard } },
  spec: { firstName: 'N', lastName: 'T', email: `${name}@example.org`, lastLogin: new Date().toISOString(), workspaces: [{ name: l.workspace, role: 'user' }] },
});

async function events(namespace: string, kind: string, name: string): Promise<{ type: string; reason: string; message: string }[]> {
  const list = await rest().request('GET', `/api/v1/namespaces/${namespace}/events`, { query: { fieldSelector: `involvedObject.name=${name},involvedObject.kind=${kind}` } });
  return list.items;
}

/** Created once the server admits it (the tenant namespace and its counted quota come first). */
async function createWhenAdmitted(o: KubeObject): Promise<KubeObject> {
  return waitFor(
    async () => {
      try {
        return await create(o);
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000, message: `${o.kind} ${o.metadata.name} created` },
  );
}

beforeAll(async () => {
  await createIgnoringConflict(nsRef(config.mydrivePvcsNamespace) as KubeObject);
  // A Workspace alice is not in, with a Template of its own.
  l.inputs.cluster.push({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: otherWs, labels: { [SELECTOR]: shard } }, spec: { prettyName: 'Other', quota: { cpu: 4, memory: '8Gi', instances: 2 } } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config);
  await waitFor(async () => (await getObject(nsRef(l.tenantNs))) && (await getObject(nsRef(l.workspaceNs))) && (await getObject(nsRef(otherWsNs))), { timeoutMs: 60_000, message: 'lab namespaces' });
  for (const name of ['vm', 'desk']) await create(template(name));
  await create({ ...template('desk'), metadata: { name: 'hidden', namespace: otherWsNs }, spec: { ...(template('desk').spec as object), 'workspace.crownlabs.polito.it/WorkspaceRef': { name: otherWs } } });
}, 180_000);

afterAll(async () => {
  await ctl?.handle.stop();
  for (const name of [carol, dave]) {
    await patch(tenantRef(name), { metadata: { finalizers: null } }).catch(() => undefined);
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/tenants/${name}`).catch(() => undefined);
  }
  await patch({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: otherWs } }, { metadata: { finalizers: null } }).catch(() => undefined);
  await cleanupLab(l);
  for (const ns of [otherWsNs, `tenant-${shard}-carol`, `tenant-${shard}-dave`]) await deleteNamespaceWithPvcs(ns);
  await removeMyDriveVolumes(adminKubeConfig(), pvOwner);
});

describe('controller: an Instance named like an object of its Tenant\'s set', () => {
  it('Instance mydrive-info, created before the MyDrive PV binds, does not block the Tenant: the Tenant takes the Secret, its quota is applied and its status is what is live', async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: l.tenantNs } };
    const inst = await createWhenAdmitted(instance('mydrive-info', 'vm'));
    // Its cloud-init Secret is called mydrive-info.
    await waitFor(async () => (await getObject<any>(secret))?.metadata.ownerReferences?.[0]?.uid === inst.metadata.uid, { message: 'the Instance\'s cloud-init Secret' });

    // The PV binds: the Tenant's set now renders mydrive-info too.
    await createMyDriveVolumes(adminKubeConfig(), config, [{ claim: myDrivePvcName(alice), attributes: { server: 'nfs-g', clusterID: 'rook', share: `/volumes/${shard}` } }], pvOwner);
    const tenant = await getObject<any>(tenantRef(alice));
    const owned = await waitFor(
      async () => {
        const s = await getObject<any>(secret);
        return s?.metadata.ownerReferences?.[0]?.uid === tenant.metadata.uid && s;
      },
      { timeoutMs: 60_000, message: 'mydrive-info taken by the Tenant' },
    );
    expect(Buffer.from(owned.data['server-name'], 'base64').toString()).toBe('nfs-g.rook');
    expect(Object.keys(owned.data).sort()).toEqual(['path', 'server-name']);

    // A quota change reaches the ResourceQuota, and status.quota is what it holds.
    await patch(tenantRef(alice), { spec: { quota: { cpu: 7, memory: '30Gi', instances: 9 } } });
    const rq = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'crownlabs-resource-quota', namespace: l.tenantNs } };
    await waitFor(async () => (await getObject<any>(rq))?.spec.hard['count/instances.crownlabs.polito.it'] === '9', { timeoutMs: 30_000, message: 'the new quota applied' });
    await waitFor(async () => (await getObject<any>(tenantRef(alice)))?.status?.quota?.instances === 9, { message: 'status.quota' });
    const live = await getObject<any>(rq);
    expect((await getObject<any>(tenantRef(alice))).status.quota).toEqual({ cpu: live.spec.hard['limits.cpu'], memory: live.spec.hard['limits.memory'], instances: 9 });

    // The Instance is the one refused, and says why.
    await waitFor(async () => (await events(l.tenantNs, 'Instance', 'mydrive-info')).some((e) => e.reason === 'EnvironmentEnforcementFailed' && e.message.includes('Tenant objects take precedence over Instance objects')), {
      timeoutMs: 30_000,
      message: 'a Warning Event on the Instance',
    });
    await waitFor(async () => (await getObject<any>(inst))?.status?.phase === 'CreationLoopBackoff', { message: 'the Instance in CreationLoopBackoff' });
    // No fight: the Secret stays the Tenant's.
    await new Promise((r) => setTimeout(r, 2_000));
    expect((await getObject<any>(secret)).metadata.ownerReferences.map((o: { uid: string }) => o.uid)).toEqual([tenant.metadata.uid]);
  });
});

describe('controller: an Instance of a Template of a workspace its Tenant is not in', () => {
  it('renders nothing, reports TenantNotEnrolled with CreationLoopBackoff and gets no frozen Template spec; once enrolled it renders', async () => {
    const inst = await createWhenAdmitted(instance('peek', 'hidden', otherWsNs));
    await waitFor(async () => (await events(l.tenantNs, 'Instance', 'peek')).some((e) => e.reason === 'TenantNotEnrolled'), { message: 'a TenantNotEnrolled Event' });
    const event = (await events(l.tenantNs, 'Instance', 'peek')).find((e) => e.reason === 'TenantNotEnrolled')!;
    expect(event).toMatchObject({ type: 'Warning', message: `Tenant ${alice} is not enrolled in workspace ${otherWs} of Template ${otherWsNs}/hidden: nothing is rendered for this Instance` });
    await waitFor(async () => (await getObject<any>(inst))?.status?.phase === 'CreationLoopBackoff', { message: 'CreationLoopBackoff' });
    const live = await getObject<any>(inst);
    expect(live.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION]).toBeUndefined();
    expect(await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'peek', namespace: l.tenantNs } })).toBeUndefined();
    // Nothing written for it but its status: no child, no label or annotation patch of the Instance.
    expect(ctl.writes().filter((r) => /\/peek(-[a-z]+)?(\?|$)/.test(r.path)).map((r) => `${r.method} ${r.path}`)).toEqual([]);

    // Enrolled (as a manager: any role counts), the same Instance renders.
    const spec = (await getObject<any>(tenantRef(alice))).spec;
    await patch(tenantRef(alice), { spec: { workspaces: [...spec.workspaces, { name: otherWs, role: 'manager' }] } });
    await waitFor(async () => Boolean(await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'peek', namespace: l.tenantNs } })), { timeoutMs: 30_000, message: 'the Deployment once enrolled' });
    expect((await getObject<any>(inst)).metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION]).toBeDefined();
  });
});

describe('controller: a namespace CrownLabs did not make', () => {
  it('is not adopted by a new Tenant named like it: the Tenant reports it, and deleting the Tenant leaves the namespace', async () => {
    const ns = `tenant-${shard}-carol`;
    await create({ ...nsRef(ns), metadata: { name: ns, labels: { team: 'someone-else' } } } as KubeObject);
    await create(newTenant(carol));
    await waitFor(async () => (await events('default', 'Tenant', carol)).some((e) => e.reason === 'ReconcileFailed' && e.message.includes(`Namespace/${ns}: exists and was not created by CrownLabs: not adopted`)), {
      timeoutMs: 30_000,
      message: 'a ReconcileFailed Event naming the namespace',
    });
    const t = await waitFor(async () => {
      const o = await getObject<any>(tenantRef(carol));
      return o?.status?.ready === false && o;
    });
    expect(t.status.personalNamespace).toEqual({ name: '', created: false });
    // No ResourceQuota was applied: status claims none.
    expect(t.status.quota).toBeUndefined();
    const live = await getObject<any>(nsRef(ns));
    expect(live.metadata.ownerReferences).toBeUndefined();
    expect(live.metadata.labels).toEqual(expect.not.objectContaining({ 'crownlabs.polito.it/type': 'tenant' }));
    // Nothing of the set is applied: not the RoleBindings that would let carol into it.
    expect(await getObject({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `crownlabs-manage-${ns}` } })).toBeUndefined();
    // crownlabs diff shows the conflict as an error (exit 2).
    const cfg = join(mkdtempSync(join(tmpdir(), 'guards-')), 'config.yaml');
    writeFileSync(cfg, [`targetLabel: ${SELECTOR}=${shard}`, `namespaceWhitelist: ${SELECTOR}=${shard}`, `mydrivePvcsNamespace: ${config.mydrivePvcsNamespace}`, `websiteBaseUrl: ${config.websiteBaseUrl}`, ''].join('\n'));
    const r = spawnSync(process.execPath, [BIN, 'diff', '--kubeconfig', adminKubeConfigPath(), '--config', cfg, '-q', '--from-cluster', '-l', `crownlabs.polito.it/name=${carol}`], { encoding: 'utf8', env: { ...process.env, CI: 'true' } });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`error   Namespace/${ns}: exists and was not created by CrownLabs: not adopted`);

    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/tenants/${carol}`);
    await waitFor(async () => !(await getObject(tenantRef(carol))), { message: 'carol gone' });
    // The garbage collector has had time to act on anything the Tenant owned.
    await new Promise((r) => setTimeout(r, 3_000));
    const after = await getObject<any>(nsRef(ns));
    expect(after).toBeDefined();
    expect(after.metadata.deletionTimestamp).toBeUndefined();
  });

  it('is adopted when annotated composer.crownlabs.polito.it/adopt=true, and then goes with the Tenant', async () => {
    const ns = `tenant-${shard}-dave`;
    await create({ ...nsRef(ns), metadata: { name: ns, annotations: { [ADOPT_ANNOTATION]: 'true' } } } as KubeObject);
    const t = await create(newTenant(dave));
    await waitFor(async () => (await getObject<any>(tenantRef(dave)))?.status?.personalNamespace?.created === true, { timeoutMs: 30_000, message: 'dave\'s namespace adopted' });
    expect((await getObject<any>(tenantRef(dave))).status.personalNamespace).toEqual({ name: ns, created: true });
    expect((await getObject<any>(nsRef(ns))).metadata.ownerReferences.map((o: { uid: string }) => o.uid)).toEqual([t.metadata.uid]);

    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/tenants/${dave}`);
    await waitFor(async () => {
      const o = await getObject<any>(nsRef(ns));
      return !o || Boolean(o.metadata.deletionTimestamp);
    }, { timeoutMs: 60_000, message: 'the adopted namespace deleted with its Tenant' });
  });
});
