// The apply-controller against the real test cluster, as installed (test/integration/as-installed.ts:
// its ServiceAccount, the rendered args, RBAC, policies and webhooks): one composition, status (from
// the children kube-controller-manager and kwok's Stages drive), drift correction, prune safety,
// zero writes on a steady-state resync, Template freeze, garbage collection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { COMPOSER, parentId } from '../../src/model/labels.ts';
import { removeInstall, runInstalledController, type InstalledController } from './as-installed.ts';
import { getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import {
  cleanupLab,
  create,
  createIgnoringConflict,
  expectedObjects,
  inOrder,
  lab,
  labConfig,
  liveOf,
  patch,
  phaseHistory,
  shardName,
  type Lab,
} from './controller-support.ts';

const shard = shardName('ctl');
const l: Lab = lab(shard);
const config = labConfig(shard);
let ctl: InstalledController;
let phases: Map<string, string[]>;
let convergeMs = 0;

const inst = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });
const getInst = (name: string) => getObject<any>(inst(name));

beforeAll(async () => {
  const t0 = Date.now();
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runInstalledController(config);
  phases = phaseHistory(ctl);
  // Templates and Instances live in namespaces the controller creates.
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  for (const o of l.inputs.namespaced) await create(o);
  await waitFor(async () => (await getInst('app-1'))?.status?.phase !== undefined, { timeoutMs: 30_000, message: 'instances reconciled' });
  await ctl.handle.idle();
  convergeMs = Date.now() - t0;
  console.log(`lab converged in ${convergeMs} ms, ${ctl.writes().length} writes, ${ctl.requests.length} requests`);
});

afterAll(async () => {
  await ctl?.stop();
  await cleanupLab(l);
  await removeInstall(ctl);
});

describe('controller: one composition', () => {
  it('live children hold exactly what renderAll(compose(...)) renders for the same inputs', async () => {
    const expected = await expectedObjects(l, config);
    expect(expected.length).toBeGreaterThan(30);
    const kinds = new Set(expected.map((o) => o.kind));
    for (const k of ['VirtualMachine', 'VirtualMachineInstance', 'Deployment', 'Service', 'Ingress', 'Namespace', 'ResourceQuota', 'NetworkPolicy', 'ClusterRoleBinding', 'PersistentVolumeClaim']) expect(kinds).toContain(k);
    const mismatches: string[] = [];
    for (const o of expected) {
      const live = await liveOf(o);
      // Strict: every rendered field, with the very value rendered (no normalisation at all).
      if (!live) mismatches.push(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}: missing`);
      else mismatches.push(...strictDifferences(o, live, `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`));
    }
    expect(mismatches).toEqual([]);
  });

  it('Instances get their own labels, a prettyName and the frozen Template spec', async () => {
    const i = await getInst('vm-1');
    expect(i.metadata.labels).toMatchObject({ 'crownlabs.polito.it/managed-by': 'instance', 'crownlabs.polito.it/workspace': l.workspace, 'crownlabs.polito.it/template': 'vm', 'crownlabs.polito.it/persistent': 'false' });
    expect(i.spec.prettyName).toMatch(/^[A-Z][a-z]+ [A-Z][a-z]+$/);
    expect(JSON.parse(i.metadata.annotations[FROZEN_TEMPLATE_ANNOTATION]).environmentList[0].name).toBe('vm');
  });

  it('Tenant status reports every missing workspace, quota, namespaces; labels and finalizer on the Tenant', async () => {
    const t = await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: l.tenants[0] } });
    expect(t.status).toMatchObject({
      personalNamespace: { name: l.tenantNs, created: true },
      sandboxNamespace: { name: `sandbox-${shard}-alice`, created: true },
      failingWorkspaces: [`${shard}-missing-1`, `${shard}-missing-2`],
      subscriptions: { keycloak: 'Ok' },
      ready: true,
      quota: { cpu: '8', memory: '40Gi', instances: 10 },
    });
    expect(t.metadata.finalizers).toContain('crownlabs.polito.it/tenant-operator');
    expect(t.metadata.labels).toMatchObject({ [`crownlabs.polito.it/workspace-${l.workspace}`]: 'user', 'crownlabs.polito.it/first-name': 'Alice', 'crownlabs.polito.it/last-name': 'ONeil' });
    // Bob never logged in and has no instances: no personal namespace (keep-alive, docs/behaviour.md §5.3 step 5).
    const bob = await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: l.tenants[1] } });
    expect(bob.status.personalNamespace).toEqual({ name: '', created: false });
    expect(await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `tenant-${shard}-bob` } })).toBeUndefined();
    expect(bob.metadata.labels).toMatchObject({ [`crownlabs.polito.it/workspace-${l.workspace}`]: 'manager' });
    const w = await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: l.workspace } });
    expect(w.status).toMatchObject({ namespace: { name: l.workspaceNs, created: true }, subscription: { keycloak: 'Failed' }, ready: true });
  });
});

describe('controller: status from the simulated nodes (kwok), not from the test', () => {
  const phasesOf = (name: string) => phases.get(`${l.tenantNs}/${name}`) ?? [];

  it('container phase follows the Deployment that kube-controller-manager and kwok make ready; url and ip are written', async () => {
    await waitFor(async () => (await getInst('desk-1'))?.status?.phase === 'Ready', { message: 'desk-1 Ready' });
    expect(inOrder(phasesOf('desk-1'), ['', 'Starting', 'Ready'])).toBe(true);
    const dep = (await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'desk-1', namespace: l.tenantNs } })) as any;
    expect(dep.status).toMatchObject({ replicas: 1, readyReplicas: 1, availableReplicas: 1 });
    const s = (await getInst('desk-1')).status;
    expect(s.initialReadyTime).toMatch(/^(\d+m)?\d+s$/);
    const svc = await liveOf({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'desk-1', namespace: l.tenantNs } });
    expect(s.ip).toBe((svc as any).spec.clusterIP);
    expect(s.url).toMatch(/^https:\/\/crownlabs\.test\/instance\/[0-9a-f-]+\/app\/$/);
  });

  it('VM phase follows the VMI (ephemeral) and the VM printableStatus (persistent)', async () => {
    await waitFor(async () => (await getInst('vm-1'))?.status?.phase === 'Ready', { message: 'vm-1 Ready' });
    expect(inOrder(phasesOf('vm-1'), ['', 'Starting', 'Running', 'Ready'])).toBe(true);
    await waitFor(async () => (await getInst('pvm-1'))?.status?.phase === 'Ready', { message: 'pvm-1 Ready' });
    // The DataVolume import takes 2.5 s: the controller reports it as Importing.
    expect(phasesOf('pvm-1')).toContain('Importing');
    expect(inOrder(phasesOf('pvm-1'), ['', 'Importing', 'Starting', 'Running', 'Ready'])).toBe(true);
  });
});

describe('controller: steady state and drift', () => {
  it('a resync of the converged lab sends zero write requests', async () => {
    await ctl.handle.idle();
    const before = ctl.writes().length;
    const skipsBefore = (await ctl.handle.metrics.writeSkips.get()).values.reduce((a, v) => a + v.value, 0);
    const reconciledBefore = ctl.reconciled.length;
    ctl.handle.resyncAll();
    await ctl.handle.idle();
    // One reconcile per parent of this lab: nothing requeued by our own (absent) writes.
    // (Other keys may show up: the shared cluster still deletes other test files' objects.)
    const ours = ctl.reconciled.slice(reconciledBefore).filter((k) => k.includes(shard));
    expect(ours.length).toBe(new Set(ours).size);
    expect(ours.length).toBe(3 + 6);
    const writes = ctl.writes().slice(before);
    expect(writes).toEqual([]);
    const skips = (await ctl.handle.metrics.writeSkips.get()).values.reduce((a, v) => a + v.value, 0) - skipsBefore;
    console.log(`steady-state resync: ${writes.length} writes, ${skips} write-skips`);
    expect(skips).toBeGreaterThan(30);
  });

  it('a hand edit of a rendered field is reverted', async () => {
    const q = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'crownlabs-resource-quota', namespace: l.tenantNs } };
    const before = (await liveOf(q)) as any;
    await patch(q, { spec: { hard: { 'limits.cpu': '99' } } });
    await waitFor(async () => ((await liveOf(q)) as any).spec.hard['limits.cpu'] === before.spec.hard['limits.cpu'], { message: 'quota reverted' });
  });

  it("a hand edit of a rendered Secret's data is reverted (the cache compares digests of the data)", async () => {
    const ref = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'vm-1', namespace: l.tenantNs } };
    const before = (await liveOf(ref)) as KubeObject & { data: Record<string, string> };
    expect(before.data.userdata).toBeTruthy();
    await patch(ref, { data: { userdata: Buffer.from('#cloud-config\n{}\n').toString('base64') } });
    await waitFor(async () => ((await liveOf(ref)) as typeof before).data.userdata === before.data.userdata, { message: 'cloud-init Secret reverted' });
  });

  it('a deleted child is recreated', async () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'desk-1', namespace: l.tenantNs } };
    const old = (await liveOf(svc)) as any;
    await rest().request('DELETE', `/api/v1/namespaces/${l.tenantNs}/services/desk-1`);
    await waitFor(async () => {
      const now = (await liveOf(svc)) as any;
      return now && now.metadata.uid !== old.metadata.uid;
    }, { message: 'service recreated' });
  });

  it('prune leaves alone a foreign object carrying the parent labels but not owned by it', async () => {
    const parent = { kind: 'Instance' as const, name: 'desk-1', namespace: l.tenantNs };
    const foreign: KubeObject = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        name: 'foreign',
        namespace: l.tenantNs,
        labels: { [COMPOSER.managedByKey]: COMPOSER.managedByValue, [COMPOSER.parentIdLabel]: parentId(parent), [COMPOSER.parentKindLabel]: 'Instance' },
        annotations: { [COMPOSER.parentAnnotation]: `Instance/${l.tenantNs}/desk-1` },
      },
      spec: { ports: [{ port: 80 }] },
    };
    await create(foreign);
    // The running toggle drops Service and Ingress of desk-1: they are pruned, the foreign one stays.
    await patch(inst('desk-1'), { spec: { running: false } });
    await waitFor(async () => !(await liveOf({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'desk-1-gui', namespace: l.tenantNs } })), { message: 'ingress pruned' });
    await ctl.handle.idle();
    expect(await liveOf({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'desk-1', namespace: l.tenantNs } })).toBeUndefined();
    expect(await liveOf(foreign)).toBeDefined();
    expect((await getInst('desk-1')).status.phase).toBe('Off');
    await patch(inst('desk-1'), { spec: { running: true } });
    await waitFor(async () => await liveOf({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'desk-1-gui', namespace: l.tenantNs } }), { message: 'ingress back' });
  });

  it('a Template edit does not change an existing Instance\'s children', async () => {
    const vmiRef = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm-1', namespace: l.tenantNs } };
    const before = (await liveOf(vmiRef)) as any;
    const tmpl = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Template', metadata: { name: 'vm', namespace: l.workspaceNs } };
    const t = (await liveOf(tmpl)) as any;
    t.spec.environmentList[0].image = 'registry.example/vm:2';
    await patch(tmpl, { spec: { environmentList: t.spec.environmentList } });
    await new Promise((r) => setTimeout(r, 500));
    await ctl.handle.idle();
    const after = (await liveOf(vmiRef)) as any;
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(JSON.stringify(after.spec)).toContain('registry.example/vm:1');
  });

  it('a watch resumed from an expired resourceVersion re-lists (410 Gone)', async () => {
    const inf = ctl.handle.caches.instances;
    const lists = inf.lists;
    inf.restartWatchFrom('1');
    await waitFor(() => inf.lists > lists, { message: 're-list after 410' });
    // Still watching: a new edit reaches the controller.
    await patch(inst('app-1'), { spec: { prettyName: 'After Relist' } });
    await waitFor(() => (inf.get(l.tenantNs, 'app-1')?.spec as any)?.prettyName === 'After Relist', { message: 'event after re-list' });
  });

  it('deleting an Instance garbage-collects its children', async () => {
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/pdesk-1`);
    await waitFor(async () => !(await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'pdesk-1', namespace: l.tenantNs } })), {
      timeoutMs: 60_000,
      message: 'deployment garbage-collected',
    });
  });
});

describe('controller: failures and selection', () => {
  it('an Instance whose Template is missing gets phase CreationLoopBackoff and a Warning Event', async () => {
    await create({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'orphan', namespace: l.tenantNs },
      spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'nope', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    });
    await waitFor(async () => (await getInst('orphan'))?.status?.phase === 'CreationLoopBackoff', { message: 'CreationLoopBackoff' });
    const events = await rest().request('GET', `/api/v1/namespaces/${l.tenantNs}/events`, { query: { fieldSelector: 'involvedObject.name=orphan' } });
    expect(events.items.map((e: any) => [e.type, e.reason, e.message])).toContainEqual(['Warning', 'TemplateNotFound', `Template ${l.workspaceNs}/nope not found`]);
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/orphan`);
  });

  it('Instances in a namespace without the whitelist labels are left alone', async () => {
    const ns = `${shard}-other`;
    await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    try {
      await create({
        apiVersion: 'crownlabs.polito.it/v1alpha2',
        kind: 'Instance',
        metadata: { name: 'outside', namespace: ns },
        spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'desk', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
      });
      await new Promise((r) => setTimeout(r, 500));
      await ctl.handle.idle();
      const i = await getObject<any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'outside', namespace: ns } });
      expect(i.status).toBeUndefined();
      expect(i.metadata.labels).toBeUndefined();
      expect(await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'outside', namespace: ns } })).toBeUndefined();
    } finally {
      await rest().request('DELETE', `/api/v1/namespaces/${ns}`);
    }
  });

  it('a pod the tenant quota refuses shows as ResourceQuotaExceeded (ReplicaFailure from kube-controller-manager)', async () => {
    // 64 CPUs: more than the tenant's quota (8), so quota admission refuses the ReplicaSet's pod.
    const big = structuredClone(l.inputs.namespaced.find((o) => o.kind === 'Template' && o.metadata.name === 'desk')!) as any;
    big.metadata.name = 'huge';
    big.spec.environmentList[0].name = 'huge';
    big.spec.environmentList[0].resources.cpu = 64;
    await create(big);
    await create({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'huge-1', namespace: l.tenantNs },
      spec: { running: true, 'template.crownlabs.polito.it/TemplateRef': { name: 'huge', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    });
    await waitFor(async () => (await getInst('huge-1'))?.status?.phase === 'ResourceQuotaExceeded', { timeoutMs: 60_000, message: 'huge-1 ResourceQuotaExceeded' });
    const dep = (await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'huge-1', namespace: l.tenantNs } })) as any;
    expect(dep.status.conditions).toContainEqual(expect.objectContaining({ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: expect.stringContaining('exceeded quota') }));
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/huge-1`);
  });

  it('running=false stops a persistent VM (spec.running) and keeps an ephemeral VMI running, un-exposed (stoppedEphemeral: keep-running)', async () => {
    const vmiRef = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'vm-1', namespace: l.tenantNs } };
    const vmiUid = ((await liveOf(vmiRef)) as any).metadata.uid;
    await patch(inst('pvm-1'), { spec: { running: false } });
    await patch(inst('vm-1'), { spec: { running: false } });
    await waitFor(async () => ((await liveOf({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'pvm-1', namespace: l.tenantNs } })) as any)?.spec.running === false, { message: 'VM stopped' });
    await waitFor(async () => !(await liveOf({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'vm-1-gui', namespace: l.tenantNs } })), { message: 'vm-1 un-exposed' });
    await waitFor(async () => (await getInst('vm-1')).status.phase === 'Off', { message: 'vm-1 Off' });
    expect(((await liveOf(vmiRef)) as any).metadata.uid).toBe(vmiUid);
    // kwok shuts the VMI down as virt-controller would: the VM reports Stopped, the phase is Off.
    await waitFor(async () => (await getInst('pvm-1')).status.phase === 'Off', { message: 'pvm-1 Off' });
    expect(await liveOf({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: { name: 'pvm-1', namespace: l.tenantNs } })).toBeUndefined();
    expect(await liveOf({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'pvm-1-gui', namespace: l.tenantNs } })).toBeUndefined();
  });
});

/** Paths where `live` lacks a rendered field or holds another value (exact comparison). */
function strictDifferences(rendered: unknown, live: unknown, path: string): string[] {
  if (Array.isArray(rendered)) {
    if (!Array.isArray(live) || live.length !== rendered.length) return [`${path}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`];
    return rendered.flatMap((r, i) => strictDifferences(r, live[i], `${path}/${i}`));
  }
  if (rendered && typeof rendered === 'object') {
    if (!live || typeof live !== 'object') return [`${path}: missing`];
    return Object.entries(rendered).flatMap(([k, v]) => strictDifferences(v, (live as Record<string, unknown>)[k], `${path}/${k}`));
  }
  return rendered === live ? [] : [`${path}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`];
}
