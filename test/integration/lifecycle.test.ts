// End to end: every environment type runs through its phases on the simulated nodes. Nothing here
// writes a status: kube-controller-manager (Deployments, ReplicaSets, PV binding, garbage
// collection) and kwok's Stages (kubelets, KubeVirt, CDI, a CSI provisioner; see
// scripts/test-cluster.d/kwok/stages) move the children along, and the controller derives the
// Instance phase, url and ip from them. Stop and start, a crashing VMI and deletion included.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, listObjects, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, inOrder, lab, labConfig, patch, phaseHistory, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('lfc');
const l: Lab = lab(shard);
const config = labConfig(shard);
let ctl: RunningController;
let phases: Map<string, string[]>;

// Beside lab()'s vm, pvm (persistent VM with a DataVolume), cloud (CloudVM, no GUI), desk, pdesk
// (Container) and app (Standalone): a Standalone with rewriteURL, and a VM whose guest crashes
// (kwok's failure marker in its containerDisk image).
const EXTRA = [
  { name: 'appr', environmentType: 'Standalone', persistent: false, guiEnabled: true, rewriteURL: true, image: 'registry.example/appr:1' },
  { name: 'crash', environmentType: 'VirtualMachine', persistent: false, guiEnabled: true, image: 'registry.example/kwok-fail/vm:1' },
];
for (const e of EXTRA) {
  const { name, image, ...env } = e;
  l.inputs.namespaced.push(
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Template',
      metadata: { name, namespace: l.workspaceNs },
      spec: {
        prettyName: name,
        description: `${e.environmentType} template`,
        'workspace.crownlabs.polito.it/WorkspaceRef': { name: l.workspace },
        environmentList: [{ name, image, ...env, mountMyDriveVolume: false, resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi' } }],
      },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: `${name}-1`, namespace: l.tenantNs },
      spec: { running: true, 'template.crownlabs.polito.it/TemplateRef': { name, namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    },
  );
}

/** Instance name → what the phases go through on the way to Ready, and the URL path upstream gives it. */
const TYPES = {
  'vm-1': { order: ['', 'Starting', 'Running', 'Ready'], must: ['Starting'], url: '/' },
  'pvm-1': { order: ['', 'Importing', 'Starting', 'Running', 'Ready'], must: ['Importing', 'Starting'], url: '/' },
  'cloud-1': { order: ['', 'Importing', 'Starting', 'Running', 'Ready'], must: ['Importing', 'Starting'], url: '' }, // no GUI: no Ingress, no URL
  'desk-1': { order: ['', 'Starting', 'Ready'], must: ['Starting'], url: '/app/' },
  'pdesk-1': { order: ['', 'Starting', 'Ready'], must: ['Starting'], url: '/app/' },
  'app-1': { order: ['', 'Starting', 'Ready'], must: ['Starting'], url: '/app/' },
  'appr-1': { order: ['', 'Starting', 'Ready'], must: ['Starting'], url: '/app/' },
} as const;
type Name = keyof typeof TYPES;
const NAMES = Object.keys(TYPES) as Name[];

const instRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });
const getInst = (name: string) => getObject<any>(instRef(name));
const phasesOf = (name: string) => phases.get(`${l.tenantNs}/${name}`) ?? [];
const phaseIs = (name: string, phase: string) => waitFor(async () => (await getInst(name))?.status?.phase === phase, { timeoutMs: 60_000, message: `${name} ${phase}` });

/** url and ip as upstream defines them (docs/behaviour.md §7.3: Service clusterIP; https://<host>/instance/<uid>/[app/]). */
async function expectUrlAndIp(name: Name): Promise<void> {
  const i = await getInst(name);
  const svc = await getObject<any>({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: l.tenantNs } });
  expect(svc.spec.clusterIP).toMatch(/^10\.0\.\d+\.\d+$/);
  expect(i.status.ip).toBe(svc.spec.clusterIP);
  const path = TYPES[name].url;
  // Upstream's url is omitempty: an environment without a URL has none (not "").
  expect(i.status.url).toBe(path ? `https://crownlabs.test/instance/${i.metadata.uid}${path}` : undefined);
}

beforeAll(async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config);
  phases = phaseHistory(ctl);
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  for (const o of l.inputs.namespaced) await create(o);
});

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
});

describe('every environment type reaches Ready through its phases, with url and ip', () => {
  it.each(NAMES)('%s', async (name) => {
    await phaseIs(name, 'Ready');
    const seen = phasesOf(name);
    expect(inOrder(seen, TYPES[name].order), `phases seen: ${seen.join(' → ')}`).toBe(true);
    for (const p of TYPES[name].must) expect(seen, `phases seen: ${seen.join(' → ')}`).toContain(p);
    await expectUrlAndIp(name);
    expect((await getInst(name)).status.initialReadyTime).toMatch(/^(\d+m)?\d+s$/);
  });

  it('the children carry what KubeVirt, CDI and the kubelets report', async () => {
    const get = (apiVersion: string, kind: string, name: string) => getObject<any>({ apiVersion, kind, metadata: { name, namespace: l.tenantNs } });
    const vmi = await get('kubevirt.io/v1', 'VirtualMachineInstance', 'vm-1');
    expect(vmi.status.phase).toBe('Running');
    expect(vmi.status.nodeName).toMatch(/^kwok-node-\d+$/);
    expect(vmi.status.interfaces[0]).toMatchObject({ name: 'default', ipAddress: expect.stringMatching(/^10\.245\.\d+\.\d+$/) });
    const vm = await get('kubevirt.io/v1', 'VirtualMachine', 'pvm-1');
    expect(vm.status).toMatchObject({ printableStatus: 'Running', ready: true });
    expect((await get('kubevirt.io/v1', 'VirtualMachineInstance', 'pvm-1')).metadata.ownerReferences[0]).toMatchObject({ kind: 'VirtualMachine', name: 'pvm-1', controller: true });
    const dv = await get('cdi.kubevirt.io/v1beta1', 'DataVolume', 'pvm-1');
    expect(dv.status).toMatchObject({ phase: 'Succeeded', progress: '100.0%' });
    // The DataVolume's PVC and the persistent container's PVC: provisioned, bound by kube-controller-manager.
    for (const claim of ['pvm-1', 'pdesk-1']) {
      const pvc = await get('v1', 'PersistentVolumeClaim', claim);
      expect(pvc.status.phase).toBe('Bound');
      const pv = await getObject<any>({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pvc.spec.volumeName } });
      expect(pv.spec.claimRef).toMatchObject({ name: claim, uid: pvc.metadata.uid });
    }
    const pods = await listObjects<any>('v1', 'Pod', { namespace: l.tenantNs, labelSelector: 'crownlabs.polito.it/instance=desk-1' });
    expect(pods).toHaveLength(1);
    expect(pods[0].spec.nodeName).toMatch(/^kwok-node-\d+$/);
    expect(pods[0].status.conditions).toContainEqual(expect.objectContaining({ type: 'Ready', status: 'True' }));
    // The rewrite rule of a Standalone environment.
    const ingressPath = async (n: string) => (await getObject<any>({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: `${n}-app`, namespace: l.tenantNs } })).spec.rules[0].http.paths[0].path;
    expect(await ingressPath('appr-1')).toBe(`/instance/${(await getInst('appr-1')).metadata.uid}/app(/|$)(.*)`);
    expect(await ingressPath('app-1')).toBe(`/instance/${(await getInst('app-1')).metadata.uid}/app`);
  });
});

describe('a VMI whose guest crashes', () => {
  it('gives the Failed phase, and the Warning Event virt-handler records', async () => {
    await phaseIs('crash-1', 'Failed');
    expect(inOrder(phasesOf('crash-1'), ['', 'Starting', 'Running', 'Failed'])).toBe(true);
    const events = await rest().request('GET', `/api/v1/namespaces/${l.tenantNs}/events`, {
      query: { fieldSelector: 'involvedObject.kind=VirtualMachineInstance,involvedObject.name=crash-1' },
    });
    expect(events.items.map((e: any) => [e.type, e.reason, e.message])).toContainEqual(['Warning', 'Stopped', 'The VirtualMachineInstance crashed.']);
  });
});

describe('stop and start', () => {
  /** After running=false: what the phases go through to Off, then back to Ready. */
  const AGAIN: Record<Name, string[]> = {
    'vm-1': ['Ready', 'Off', '', 'Starting', 'Running', 'Ready'],
    'pvm-1': ['Ready', 'Running', 'Stopping', 'Off', '', 'Starting', 'Running', 'Ready'],
    'cloud-1': ['Ready', 'Running', 'Stopping', 'Off', '', 'Starting', 'Running', 'Ready'],
    'desk-1': ['Ready', 'Off', 'Starting', 'Ready'],
    'pdesk-1': ['Ready', 'Stopping', 'Off', 'Starting', 'Ready'],
    'app-1': ['Ready', 'Off', 'Starting', 'Ready'],
    'appr-1': ['Ready', 'Off', 'Starting', 'Ready'],
  };

  it.each(NAMES)('%s: running=false reaches Off (no url, no ip), running=true Ready again', async (name) => {
    await phaseIs(name, 'Ready');
    const from = phasesOf(name).length - 1;
    await patch(instRef(name), { spec: { running: false } });
    await phaseIs(name, 'Off');
    const off = (await getInst(name)).status;
    // Removed, not written empty (upstream's fields are omitempty).
    expect([off.url, off.ip]).toEqual([undefined, undefined]);
    await patch(instRef(name), { spec: { running: true } });
    await phaseIs(name, 'Ready');
    const seen = phasesOf(name).slice(from);
    expect(inOrder(seen, AGAIN[name]), `phases seen: ${seen.join(' → ')}`).toBe(true);
    await expectUrlAndIp(name);
  });
});

describe('deleting an Instance garbage-collects everything it had', () => {
  /** Objects of the Instance left in its namespace: by name, by name prefix (Ingress, ReplicaSet, Pod) or by label. */
  async function leftovers(name: string): Promise<string[]> {
    const kinds: [string, string][] = [
      ['v1', 'Service'],
      ['v1', 'Secret'],
      ['v1', 'Pod'],
      ['v1', 'PersistentVolumeClaim'],
      ['networking.k8s.io/v1', 'Ingress'],
      ['apps/v1', 'Deployment'],
      ['apps/v1', 'ReplicaSet'],
      ['kubevirt.io/v1', 'VirtualMachine'],
      ['kubevirt.io/v1', 'VirtualMachineInstance'],
      ['cdi.kubevirt.io/v1beta1', 'DataVolume'],
    ];
    const left: string[] = [];
    for (const [apiVersion, kind] of kinds) {
      for (const o of await listObjects<KubeObject>(apiVersion, kind, { namespace: l.tenantNs })) {
        const n = o.metadata.name;
        if (n === name || n.startsWith(`${name}-`) || (o.metadata.labels as Record<string, string> | undefined)?.['crownlabs.polito.it/instance'] === name) left.push(`${kind}/${n}`);
      }
    }
    return left;
  }

  it('every child, and what kube-controller-manager and kwok made for them (ReplicaSets, Pods, DataVolumes, PVCs, PVs)', async () => {
    const names = [...NAMES, 'crash-1'];
    const volumes: string[] = [];
    for (const claim of ['pvm-1', 'cloud-1', 'pdesk-1']) {
      const pvc = await getObject<any>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: l.tenantNs } });
      volumes.push(pvc.spec.volumeName);
    }
    for (const name of names) expect((await leftovers(name)).length, name).toBeGreaterThan(0);
    for (const name of names) await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/${name}`);
    for (const name of names) await waitFor(async () => (await leftovers(name)).length === 0, { timeoutMs: 90_000, message: `${name}: nothing left (${(await leftovers(name)).join(', ')})` });
    // Reclaim policy Delete: the provisioner removed the released volumes.
    for (const pv of volumes) await waitFor(async () => !(await getObject({ apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: pv } })), { timeoutMs: 60_000, message: `PV ${pv} deleted` });
  });
});
