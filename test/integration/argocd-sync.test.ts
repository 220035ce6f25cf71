// Argo CD (v3.2, built by scripts/argocd-test: application controller, repo server, redis) syncs
// the gitops tree of the example lab plus a generated lab of 50 tenants from a local git
// repository (file:// URL) into the test cluster, with the argocd-cm keys `crownlabs manifests
// --argocd-cm` renders. The same inputs go to the apply-controller on a second test cluster, so
// the two sinks are compared live, object by object.
//
// The tree is rendered with `crownlabs gitops` from the inputs as the second cluster holds them
// (the Instances' UIDs are in paths and URLs, and an API server assigns them): the example lab's
// files and the generated lab, Tenants with a lastLogin (the controller keeps their namespaces).
//
// MyDrive PVCs are bound by kube-controller-manager to PVs created beforehand on both clusters, as
// the lab's NFS provisioner would create them (mydrive-volumes.ts), with CSI attributes that give
// the shares the tree renders from configuration. The apply-controller runs without
// mydriveNfsServerName, so its shares (mydrive-info, the pods' NFS volumes) come from those PVs only.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { INGRESS_TLS_SECRET } from '../../constructs/instance/exposition.ts';
import { REGISTRY_CREDENTIALS, REGISTRY_CREDENTIALS_CDI } from '../../constructs/instance/virtual-machine.ts';
import { TENANT_QUOTA_NAME } from '../../constructs/tenant/tenant-quota.ts';
import { readInputs } from '../../src/inputs/parse.ts';
import { loadConfig, type ComposerConfig } from '../../src/config/config.ts';
import { MYDRIVE_INFO_SECRET } from '../../src/model/mydrive.ts';
import { myDrivePvcName, tenantNamespaceName } from '../../src/model/naming.ts';
import { crownlabs } from '../support/cli.ts';
import { generateLab } from '../support/generate-lab.ts';
import { installCrds } from './cluster-setup.ts';
import { adminKubeConfig, ApiError, getObject, listObjects, REPO_ROOT, rest, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import {
  applications,
  argocd,
  commitAll,
  CreationRecorder,
  firstDifference,
  git,
  notSynced,
  objectKey,
  pickRendered,
  startPeerCluster,
  startPeerControllerManager,
  stopPeerCluster,
  treeObjects,
  withoutArgoAnnotations,
  type Application,
  type TreeObject,
} from './argocd-support.ts';
import { runController, type RunningController } from './controller-support.ts';
import { configuredAttributes, createMyDriveVolumes, removeMyDriveVolumes, type MyDriveClaim } from './mydrive-volumes.ts';

const SYNC_TIMEOUT = 300_000;
const TEMPLATE_SPEC = 'composer.crownlabs.polito.it/template-spec';
const MANAGED_BY = 'app.kubernetes.io/managed-by=crownlabs-composer';

/** Labels the MyDrive PVs this file creates (mydrive-volumes.ts), on both clusters. */
const PV_OWNER = 'argocd-sync';
/** Argo CD's order of health, best first (an Application is as healthy as its worst resource). */
const HEALTH_ORDER = ['Healthy', 'Suspended', 'Progressing', 'Missing', 'Degraded', 'Unknown'];

const clusterDir = inject('testClusterDir');
const work = mkdtempSync(path.join(os.tmpdir(), 'argocd-sync-'));
const repo = path.join(work, 'repo');
const inputsDir = path.join(work, 'inputs');
const configFile = path.join(work, 'config.yaml');
const peerDir = path.join(clusterDir || work, 'apply-controller-peer');
let config: ComposerConfig;
let kcA: KubeConfig;
let kcB: KubeConfig;
let ctl: RunningController | undefined;
let peerStarted = false;
let argoStarted = false;
let recorder: CreationRecorder | undefined;
let firstSha = '';
let tree: TreeObject[] = [];
/** The read-back inputs, as files: what `crownlabs gitops` renders, and what (d) and (c) edit. */
let inputs: KubeObject[] = [];
/** What the first render created that cleanup must remove, whatever later edits removed from the tree. */
let myDrivePvcs: string[] = [];
/** The MyDrive PV reserved for each MyDrive PVC, by PVC name, on each cluster. */
let volumesA = new Map<string, string>();
let volumesB = new Map<string, string>();
let firstNamespaces: string[] = [];

const gitopsDir = () => path.join(repo, config.gitopsPath);
const renderedObjects = () => tree.filter((t) => !t.file.startsWith('apps/') && !t.file.startsWith('root/')).map((t) => t.object);

function render(): void {
  writeFileSync(path.join(inputsDir, 'lab.yaml'), inputs.map((o) => `---\n${stringify(o)}`).join(''));
  const r = crownlabs(['gitops', '-f', inputsDir, '--config', configFile, '-o', gitopsDir()]);
  if (r.code !== 0) throw new Error(`crownlabs gitops failed (${r.code}): ${r.stderr}`);
  tree = treeObjects(gitopsDir());
}

/** Asks Argo CD to look at git now (as a git webhook does), bypassing its cache of the branch's commit. */
async function refreshAll(): Promise<void> {
  const c = rest(kcA);
  for (const a of await applications(kcA, config.argocdNamespace)) {
    const p = await c.resourcePath('argoproj.io/v1alpha1', 'Application', config.argocdNamespace, a.metadata.name);
    await c.request('PATCH', p, { body: { metadata: { annotations: { 'argocd.argoproj.io/refresh': 'hard' } } }, contentType: 'application/merge-patch+json' });
  }
}

/** Waits until every Application of the tree exists, is at `sha`, Synced and done syncing. */
async function waitSynced(sha: string, expectedApps: string[]): Promise<Application[]> {
  return waitFor(
    async () => {
      const apps = await applications(kcA, config.argocdNamespace);
      const missing = expectedApps.filter((n) => !apps.some((a) => a.metadata.name === n));
      const extra = apps.filter((a) => !expectedApps.includes(a.metadata.name)).map((a) => a.metadata.name);
      const waiting = notSynced(apps, sha);
      if (missing.length || extra.length || waiting.length) {
        throw new Error(`${missing.length} missing (${missing.slice(0, 3).join(', ')}), ${extra.length} extra (${extra.slice(0, 3).join(', ')}), ${waiting.length} not synced: ${waiting.slice(0, 5).join(' | ')}`);
      }
      return apps;
    },
    { timeoutMs: SYNC_TIMEOUT, intervalMs: 1000, message: `every Application Synced at ${sha.slice(0, 8)}` },
  );
}

const ann = (o: KubeObject | undefined) => ((o?.metadata.annotations ?? {}) as Record<string, string>);

const expectedAppNames = () => ['crownlabs-root', ...tree.filter((t) => t.file.startsWith('apps/')).map((t) => t.object.metadata.name)];

async function live(kc: KubeConfig, o: KubeObject): Promise<KubeObject | undefined> {
  return getObject<KubeObject>({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } }, kc);
}

/** The live objects of the kinds of `objects` (one list per kind), by objectKey. */
async function liveByKey(kc: KubeConfig, objects: readonly KubeObject[]): Promise<Map<string, KubeObject>> {
  const out = new Map<string, KubeObject>();
  const kinds = new Map(objects.map((o) => [`${o.apiVersion}/${o.kind}`, o]));
  for (const o of kinds.values()) {
    for (const x of await listObjects<KubeObject>(o.apiVersion, o.kind, { kubeConfig: kc })) out.set(objectKey({ kind: o.kind, metadata: x.metadata }), { ...x, apiVersion: o.apiVersion, kind: o.kind });
  }
  return out;
}

/** The inputs on the peer cluster, created in dependency order, with the controller running. */
async function deliverWithController(): Promise<void> {
  const c = rest(kcB);
  const create = async (o: KubeObject) => {
    const { uid: _uid, ...metadata } = o.metadata as Record<string, unknown>;
    await c.request('POST', await c.resourcePath(o.apiVersion, o.kind, o.metadata.namespace ?? null), { body: { ...o, metadata } });
  };
  const example = readInputs([path.join(REPO_ROOT, 'examples/lab')]).objects.map((s) => structuredClone(s.object) as unknown as KubeObject);
  const generated = generateLab({ workspaces: 3, tenants: 50, instances: 21 }) as unknown as KubeObject[];
  const all = [...example, ...generated];
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  const tenants = all.filter((x) => x.kind === 'Tenant');
  volumesB = await createMyDriveVolumes(kcB, config, tenants.map((t) => configuredAttributes(config, t.metadata.name)), PV_OWNER);
  for (const o of all.filter((x) => x.kind === 'Workspace')) await create(o);
  // Logged in just now: the controller keeps the personal namespaces (rendering from files always does).
  for (const o of tenants) await create({ ...o, spec: { ...(o.spec as object), lastLogin: now } });
  // No configured share: the controller's come from the bound PVs only.
  ctl = await runController({ ...config, mydriveNfsServerName: '' }, { kubeConfig: kcB, maxConcurrentReconciles: 4 });
  const namespaces = [...new Set(all.filter((x) => x.kind === 'Template' || x.kind === 'Instance').map((x) => x.metadata.namespace!))];
  await waitFor(async () => (await Promise.all(namespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }, kcB)))).every(Boolean), {
    timeoutMs: 120_000,
    message: 'the controller created the lab namespaces',
  });
  // kube-controller-manager computes each new ResourceQuota's usage; until it counts a resource the
  // API server refuses to create one (Instances among them), as on a real cluster.
  const tenantNamespaces = new Set(tenants.map((t) => tenantNamespaceName(t.metadata.name)));
  type Quota = KubeObject & { spec: { hard?: Record<string, string> }; status?: { used?: Record<string, string> } };
  const counted = (q: Quota) => Object.keys(q.spec.hard ?? {}).every((r) => q.status?.used?.[r] !== undefined);
  await waitFor(
    async () => {
      const quotas = await Promise.all(namespaces.map((n) => listObjects<Quota>('v1', 'ResourceQuota', { namespace: n, kubeConfig: kcB })));
      return namespaces.every((n, i) => (!tenantNamespaces.has(n) || quotas[i].some((q) => q.metadata.name === TENANT_QUOTA_NAME)) && quotas[i].every(counted));
    },
    { timeoutMs: 120_000, message: 'the lab namespaces\' ResourceQuotas have a status' },
  );
  for (const o of all.filter((x) => x.kind === 'Template')) await create(o);
  for (const o of all.filter((x) => x.kind === 'Instance')) await create(o);
  await waitFor(
    async () => {
      const instances = await listObjects<KubeObject>('crownlabs.polito.it/v1alpha2', 'Instance', { kubeConfig: kcB });
      const waiting = instances.filter((i) => !ann(i)[TEMPLATE_SPEC]).length;
      return instances.length === all.filter((x) => x.kind === 'Instance').length && waiting === 0;
    },
    { timeoutMs: 180_000, intervalMs: 500, message: 'every Instance reconciled by the controller' },
  );
  await waitFor(
    async () => {
      const secrets = await Promise.all(tenants.map((t) => getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: tenantNamespaceName(t.metadata.name), name: MYDRIVE_INFO_SECRET } }, kcB)));
      const missing = tenants.filter((_t, i) => !secrets[i]).map((t) => t.metadata.name);
      if (!missing.length) return true;
      const claim = myDrivePvcName(missing[0]);
      const pvc = await getObject<KubeObject & { spec: { volumeName?: string }; status?: { phase?: string } }>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: config.mydrivePvcsNamespace, name: claim } }, kcB);
      throw new Error(`${missing.length} without it (${missing.slice(0, 3).join(', ')}); PVC ${claim}: ${pvc ? `${pvc.status?.phase} ${pvc.spec.volumeName ?? ''}` : 'none'}`);
    },
    { timeoutMs: 120_000, message: 'every tenant\'s mydrive-info, from its bound PV' },
  );
  await ctl.handle.idle();
}

/** Workspaces, Tenants, Templates and Instances as the peer cluster holds them. */
async function readBackInputs(): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const [apiVersion, kind] of [
    ['crownlabs.polito.it/v1alpha1', 'Workspace'],
    ['crownlabs.polito.it/v1alpha2', 'Tenant'],
    ['crownlabs.polito.it/v1alpha2', 'Template'],
    ['crownlabs.polito.it/v1alpha2', 'Instance'],
  ]) {
    for (const o of await listObjects<KubeObject>(apiVersion, kind, { kubeConfig: kcB })) {
      const { managedFields: _m, resourceVersion: _rv, generation: _g, finalizers: _f, ...metadata } = o.metadata as Record<string, unknown>;
      const { status: _s, ...rest } = o as Record<string, unknown>;
      out.push({ ...rest, apiVersion, kind, metadata } as KubeObject);
    }
  }
  return out;
}

/** Deletes the tree's MyDrive PVCs on the Argo CD cluster (they outlive their Applications). */
async function removeMyDrivePvcs(): Promise<void> {
  const c = rest(kcA);
  for (const name of myDrivePvcs) {
    const p = `/api/v1/namespaces/${config.mydrivePvcsNamespace}/persistentvolumeclaims/${name}`;
    await c.request('PATCH', p, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
    await c.request('DELETE', p).catch(() => undefined);
  }
}

async function removeLeftovers(kc: KubeConfig, namespaces: readonly string[]): Promise<void> {
  const c = rest(kc);
  for (const n of namespaces) {
    try {
      for (const pvc of (await c.request('GET', `/api/v1/namespaces/${n}/persistentvolumeclaims`)).items ?? []) {
        await c.request('PATCH', `/api/v1/namespaces/${n}/persistentvolumeclaims/${pvc.metadata.name}`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
        await c.request('DELETE', `/api/v1/namespaces/${n}/persistentvolumeclaims/${pvc.metadata.name}`).catch(() => undefined);
      }
      await c.request('DELETE', `/api/v1/namespaces/${n}`);
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
  }
}

beforeAll(async () => {
  if (!clusterDir) throw new Error('scripts/argocd-test needs the state dir of the test cluster (TEST_CLUSTER_DIR); a foreign cluster (TEST_CLUSTER_KUBECONFIG alone) cannot run Argo CD');
  kcA = adminKubeConfig();
  mkdirSync(inputsDir, { recursive: true });
  mkdirSync(repo, { recursive: true });
  // The example's made-up repository replaced by the local one.
  const example = readFileSync(path.join(REPO_ROOT, 'examples/crownlabs.config.yaml'), 'utf8').replace(/^gitopsRepoUrl:.*\n/m, '');
  writeFileSync(configFile, `${example}\ngitopsRepoUrl: file://${repo}\n`);
  const loaded = loadConfig({ file: configFile });
  expect(loaded.problems).toEqual([]);
  config = loaded.config;

  const t0 = Date.now();
  const lap = (what: string) => console.log(`${what}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  // Argo CD builds (cached) while the peer cluster starts.
  const argo = argocd('start', clusterDir).then(() => (argoStarted = true));
  argo.catch(() => undefined); // awaited below
  peerStarted = true;
  kcB = await startPeerCluster(peerDir);
  await installCrds(path.join(peerDir, 'kubeconfig'));
  await startPeerControllerManager(peerDir);
  await deliverWithController();
  lap('peer cluster and the apply-controller converged');
  inputs = await readBackInputs();

  await git(repo, 'init', '-q', '-b', 'main');
  render();
  firstSha = await commitAll(repo, 'the lab');
  myDrivePvcs = renderedObjects().filter((o) => o.kind === 'PersistentVolumeClaim' && o.metadata.namespace === config.mydrivePvcsNamespace).map((o) => o.metadata.name);
  firstNamespaces = renderedObjects().filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name);

  // The namespaces the tree creates must not exist yet (another test file may have used the names).
  await removeLeftovers(kcA, firstNamespaces);
  await waitFor(async () => (await Promise.all(firstNamespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }, kcA)))).every((x) => !x), {
    timeoutMs: 120_000,
    message: 'namespaces of an earlier run gone',
  });
  await argo;
  // The namespace of MyDrive PVCs is the platform's (not in the tree), as in production.
  await rest(kcA).request('POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } } }).catch((e) => {
    if (!(e instanceof ApiError && e.code === 409)) throw e;
  });
  // Its PVs before Argo CD creates the claims (an earlier run's claims and PVs first go).
  const claims: MyDriveClaim[] = inputs.filter((o) => o.kind === 'Tenant').map((t) => configuredAttributes(config, t.metadata.name));
  expect(claims.map((c) => c.claim).sort()).toEqual([...myDrivePvcs].sort());
  await removeMyDrivePvcs();
  await removeMyDriveVolumes(kcA, PV_OWNER);
  volumesA = await createMyDriveVolumes(kcA, config, claims, PV_OWNER);
  // What an operator does: merge the keys the tree needs into argocd-cm, then apply the root.
  const cm = crownlabs(['manifests', '--argocd-cm', '--config', configFile]);
  expect(cm.code).toBe(0);
  await serverSideApply(parseAllDocuments(cm.stdout).map((d) => d.toJS() as KubeObject), { kubeConfig: kcA, fieldManager: 'crownlabs-composer' });

  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const o of [...renderedObjects(), { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application' } as KubeObject]) kinds.set(`${o.apiVersion}/${o.kind}`, { apiVersion: o.apiVersion, kind: o.kind });
  recorder = await CreationRecorder.start(kcA, [...kinds.values()]);
  const root = tree.filter((t) => t.file.startsWith('root/')).map((t) => t.object);
  await serverSideApply(root, { kubeConfig: kcA, fieldManager: 'crownlabs-test-operator' });
  lap('rendered, committed, Argo CD started');
  const t1 = Date.now();
  await waitSynced(firstSha, expectedAppNames());
  console.log(`Argo CD synced ${expectedAppNames().length} Applications (${renderedObjects().length} objects) in ${((Date.now() - t1) / 1000).toFixed(1)} s`);
  recorder.stop();
}, 1_200_000);

afterAll(async () => {
  recorder?.stop();
  await ctl?.handle.stop();
  if (peerStarted) await stopPeerCluster(peerDir).catch(() => undefined);
  if (kcA && config) {
    if (argoStarted) await argocd('stop', clusterDir);
    // Without the controller the Applications' finalizers are never removed: drop them.
    const c = rest(kcA);
    for (const a of await applications(kcA, config.argocdNamespace).catch(() => [] as Application[])) {
      const p = await c.resourcePath('argoproj.io/v1alpha1', 'Application', config.argocdNamespace, a.metadata.name);
      await c.request('PATCH', p, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
    }
    for (const o of renderedObjects().filter((x) => !x.metadata.namespace && x.kind !== 'Namespace')) {
      await c.request('DELETE', await c.resourcePath(o.apiVersion, o.kind, null, o.metadata.name)).catch(() => undefined);
    }
    // The MyDrive namespace is the platform's (other files use it too): only the PVCs and their PVs go.
    await removeMyDrivePvcs();
    await removeMyDriveVolumes(kcA, PV_OWNER);
    const namespaces = [...new Set([...firstNamespaces, config.argocdNamespace])];
    await removeLeftovers(kcA, namespaces);
    // Other files render the example lab's names: leave them a clean cluster.
    await waitFor(async () => (await Promise.all(namespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } }, kcA)))).every((x) => !x), {
      timeoutMs: 180_000,
      intervalMs: 1000,
      message: 'the tree\'s namespaces deleted',
    });
  }
  rmSync(work, { recursive: true, force: true });
}, 300_000);

describe('Argo CD syncs the gitops tree', () => {
  it('(a) every Application is Synced; health comes from the real checks, ours for KubeVirt', async () => {
    // The root notes its children's health when it reconciles next: wait for Argo CD to agree.
    let state = await healthProblems();
    await waitFor(async () => (state = await healthProblems()).problems.length === 0, { timeoutMs: 240_000, intervalMs: 2000 }).catch(() => undefined);
    const { apps, tracked, problems } = state;
    // Every resource Healthy, so every Application Synced and Healthy (kwok, kube-controller-manager
    // and the MyDrive PVs make the workloads and claims so).
    expect(problems).toEqual([]);
    expect(apps.filter((a) => a.status?.health?.status !== 'Healthy').map((a) => a.metadata.name)).toEqual([]);
    // Argo CD tracks exactly the tree's objects (and the child Applications).
    const expected = new Set([...renderedObjects(), ...tree.filter((t) => t.file.startsWith('apps/')).map((t) => t.object)].map(objectKey));
    expect([...tracked].sort()).toEqual([...expected].sort());
  }, 300_000);

  it('(a) MyDrive PVCs are bound to their PVs by kube-controller-manager; the controller\'s mydrive-info carries the bound PV\'s attributes', async () => {
    const tenants = inputs.filter((o) => o.kind === 'Tenant').map((t) => t.metadata.name);
    expect(tenants.length).toBeGreaterThan(50);
    for (const [kc, volumes] of [
      [kcA, volumesA],
      [kcB, volumesB],
    ] as const) {
      for (const claim of myDrivePvcs) {
        const pvc = await getObject<KubeObject & { spec: { volumeName?: string }; status?: { phase?: string } }>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: config.mydrivePvcsNamespace, name: claim } }, kc);
        expect(pvc?.status?.phase, claim).toBe('Bound');
        expect(pvc?.spec.volumeName, claim).toBe(volumes.get(claim));
      }
    }
    // On the apply-controller's cluster (no mydriveNfsServerName there): server-name and path are
    // the live PV's `<server>.<clusterID>` and `share`.
    for (const tenant of tenants) {
      const pv = await rest(kcB).request('GET', `/api/v1/persistentvolumes/${volumesB.get(myDrivePvcName(tenant))}`);
      const attrs = pv.spec.csi.volumeAttributes as Record<string, string>;
      const secret = await getObject<KubeObject & { data: Record<string, string> }>({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: tenantNamespaceName(tenant), name: MYDRIVE_INFO_SECRET } }, kcB);
      const data = Object.fromEntries(Object.entries(secret?.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
      expect(data, tenant).toEqual({ 'server-name': `${attrs.server}.${attrs.clusterID}`, path: attrs.share });
    }
  });

  it('(b) every live object equals what the apply-controller produced from the same inputs, on every rendered field', async () => {
    const mismatches: string[] = [];
    const objects = renderedObjects();
    const [onA, onB] = await Promise.all([kcA, kcB].map((kc) => liveByKey(kc, objects)));
    for (const o of objects) {
      const rendered = withoutArgoAnnotations(o);
      const [a, b] = [onA.get(objectKey(o)), onB.get(objectKey(o))];
      for (const [sink, obj] of [
        ['Argo CD', a],
        ['apply-controller', b],
      ] as const) {
        if (!obj) mismatches.push(`${objectKey(o)}: missing (${sink})`);
        else if (JSON.stringify(pickRendered(rendered, obj)) !== JSON.stringify(rendered)) mismatches.push(`${objectKey(o)} (${sink}) ${firstDifference(rendered, obj)}`);
      }
      // Argo CD tracks by annotation (the method docs/gitops.md documents).
      expect(ann(a)['argocd.argoproj.io/tracking-id']).toMatch(/^crownlabs-/);
    }
    expect(mismatches).toEqual([]);
    // The controller rendered nothing beyond the tree and the Secrets SECRETS.md lists.
    const secrets = secretsMd();
    const treeKeys = new Set(renderedObjects().map(objectKey));
    const kinds = new Map(renderedObjects().map((o) => [`${o.apiVersion}/${o.kind}`, o]));
    const extra: string[] = [];
    for (const o of kinds.values()) {
      for (const x of await listObjects<KubeObject>(o.apiVersion, o.kind, { kubeConfig: kcB, labelSelector: MANAGED_BY })) {
        if (!treeKeys.has(objectKey({ kind: o.kind, metadata: x.metadata }))) extra.push(objectKey({ kind: o.kind, metadata: x.metadata }));
      }
    }
    expect(extra).toEqual([]);
    const bSecrets = (await listObjects<KubeObject>('v1', 'Secret', { kubeConfig: kcB, labelSelector: MANAGED_BY })).map((s) => `${s.metadata.namespace}/${s.metadata.name}`);
    expect(bSecrets.sort()).toEqual(secrets.map((s) => `${s.namespace}/${s.name}`).sort());
    console.log(`${renderedObjects().length} objects equal on both clusters`);
  });

  it('(e) no Secret value is in git; SECRETS.md lists exactly the Secrets the tree refers to and the composition renders', async () => {
    const rows = secretsMd();
    const bSecrets = await listObjects<KubeObject>('v1', 'Secret', { kubeConfig: kcB, labelSelector: MANAGED_BY });
    // Same Secrets, keys and owning Application as the controller renders.
    const appOf = new Map<string, string>();
    for (const t of tree.filter((x) => x.file.startsWith('apps/'))) appOf.set((t.object.spec as { source: { path: string } }).source.path, t.object.metadata.name);
    for (const s of bSecrets) {
      const row = rows.find((r) => r.namespace === s.metadata.namespace && r.name === s.metadata.name);
      expect(row, `${s.metadata.namespace}/${s.metadata.name} in SECRETS.md`).toBeDefined();
      expect(row!.keys).toEqual(Object.keys(s.data ?? {}).sort());
      // The Application of the Secret's parent: its tenant's, or one of its namespace's instance chunks.
      const [kind, ...rest] = ann(s)['composer.crownlabs.polito.it/parent'].split('/');
      const expected = kind === 'Tenant' ? [`crownlabs-tenant-${rest[0]}`] : [...appOf.values()].filter((a) => new RegExp(`^crownlabs-instances-${rest[0]}(-\\d+)?$`).test(a));
      expect(expected, `${s.metadata.namespace}/${s.metadata.name}`).toContain(row!.application);
    }
    // Every Secret an object of the tree names is one of those, or a platform Secret that no
    // composition renders (TLS of the Ingresses, registry credentials).
    const listed = new Set(rows.map((r) => `${r.namespace}/${r.name}`));
    const platform = new Set([INGRESS_TLS_SECRET, REGISTRY_CREDENTIALS, REGISTRY_CREDENTIALS_CDI]);
    const referenced = new Set<string>();
    for (const o of renderedObjects()) for (const name of secretNames(o)) referenced.add(`${o.metadata.namespace}/${name}`);
    const unknown = [...referenced].filter((k) => !listed.has(k) && !platform.has(k.split('/')[1]));
    expect(unknown).toEqual([]);
    // Each is needed, except mydrive-info (the controller reads it; the Deployments' NFS volumes
    // carry its values) and the cloud-init Secret of a stopped VM (kept for its next start, as upstream).
    const stopped = new Set(inputs.filter((o) => o.kind === 'Instance' && (o.spec as { running?: boolean }).running === false).map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    const unreferenced = [...listed].filter((k) => !referenced.has(k) && !k.endsWith('/mydrive-info') && !stopped.has(k));
    expect(unreferenced).toEqual([]);

    // No value of any of them in any commit: a value may appear only where the composition puts it
    // outside a Secret too (MyDrive's NFS server and path, named by every pod that mounts it).
    const history = await git(repo, 'log', '--all', '-p', '--format=%H');
    const rendered = renderedObjects().map((o) => JSON.stringify(o)).join('\n');
    const leaks: string[] = [];
    const allowed: string[] = [];
    for (const s of bSecrets) {
      for (const [key, b64] of Object.entries((s.data ?? {}) as Record<string, string>)) {
        const value = Buffer.from(b64, 'base64').toString('utf8');
        if (value.length < 6) continue;
        const forms = [value, b64, JSON.stringify(value).slice(1, -1)];
        if (!forms.some((f) => history.includes(f))) continue;
        if (rendered.includes(JSON.stringify(value).slice(1, -1))) allowed.push(`${s.metadata.name}/${key}`);
        else leaks.push(`${s.metadata.namespace}/${s.metadata.name}/${key}`);
      }
    }
    expect(leaks).toEqual([]);
    expect(allowed.filter((a) => !a.startsWith('mydrive-info/'))).toEqual([]);
    expect(history).not.toMatch(/^[+ ]kind: Secret$/m);
    // Created as an operator would (here with the controller's values), they resolve every reference.
    const c = rest(kcA);
    for (const s of bSecrets) {
      const { uid: _u, resourceVersion: _r, managedFields: _m, creationTimestamp: _c, ownerReferences: _o, ...metadata } = s.metadata as Record<string, unknown>;
      await c.request('POST', `/api/v1/namespaces/${s.metadata.namespace}/secrets`, { body: { ...s, metadata } });
    }
    for (const k of [...referenced].filter((x) => listed.has(x))) {
      const [namespace, name] = k.split('/');
      expect(await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name } }, kcA), k).toBeDefined();
    }
  });

  it('(c) sync waves create namespaces before their contents, and instance Applications after the tenants synced', () => {
    const created = recorder!.created;
    const rv = (o: KubeObject) => created.get(objectKey(o));
    const problems: string[] = [];
    for (const o of renderedObjects()) {
      const at = rv(o);
      if (at === undefined) {
        problems.push(`${objectKey(o)}: no creation seen`);
        continue;
      }
      const ns = o.metadata.namespace;
      const nsAt = ns ? created.get(`Namespace//${ns}`) : undefined;
      if (ns && ns !== config.mydrivePvcsNamespace && !(nsAt !== undefined && nsAt < at)) problems.push(`${objectKey(o)} created before its namespace`);
    }
    // Within each Application, a wave is created after the previous one.
    for (const t of tree.filter((x) => x.file.startsWith('apps/'))) {
      const folder = (t.object.spec as { source: { path: string } }).source.path.slice(config.gitopsPath.length + 1);
      const members = tree.filter((x) => x.file.startsWith(`${folder}/`)).map((x) => x.object);
      const waves = new Map<number, bigint[]>();
      for (const m of members) {
        const w = Number(ann(m)['argocd.argoproj.io/sync-wave']);
        waves.set(w, [...(waves.get(w) ?? []), rv(m) ?? 0n]);
      }
      const ordered = [...waves].sort(([a], [b]) => a - b);
      for (let i = 1; i < ordered.length; i++) {
        const lastBefore = ordered[i - 1][1].reduce((a, b) => (a > b ? a : b));
        const firstNow = ordered[i][1].reduce((a, b) => (a < b ? a : b));
        if (!(lastBefore < firstNow)) problems.push(`${t.object.metadata.name}: wave ${ordered[i][0]} began before wave ${ordered[i - 1][0]} ended`);
      }
    }
    // The root's waves: every instance Application is created after every tenant namespace.
    const apps = tree.filter((x) => x.file.startsWith('apps/')).map((x) => x.object);
    const tenantNamespaces = renderedObjects().filter((o) => o.kind === 'Namespace').map((o) => rv(o)!);
    const lastNamespace = tenantNamespaces.reduce((a, b) => (a > b ? a : b));
    for (const a of apps.filter((x) => x.metadata.name.startsWith('crownlabs-instances-'))) {
      if (!(rv(a)! > lastNamespace)) problems.push(`${a.metadata.name} created before the last namespace`);
    }
    expect(problems).toEqual([]);
  });

  it('(d) after an input edit, a re-render and a commit, only the affected Application\'s objects change', async () => {
    // A running ephemeral container: stopping it removes its Service and Ingress; its Deployment keeps its replica (stoppedEphemeral: keep-running).
    const edited = inputs.find((o) => o.kind === 'Instance' && o.metadata.name === 'inst-3')!;
    expect(edited.spec).toMatchObject({ running: true });
    const before = await liveByKey(kcA, renderedObjects());
    const oldTree = new Map(renderedObjects().map((o) => [objectKey(o), o]));
    (edited.spec as Record<string, unknown>).running = false;
    render();
    const sha = await commitAll(repo, 'stop inst-3');
    const changedFiles = (await git(repo, 'diff', '--name-only', `${firstSha}`, sha)).trim().split('\n');
    const app = 'crownlabs-instances-tenant-user-3';
    const folder = `${config.gitopsPath}/instances/tenant-user-3/`;
    expect(changedFiles.every((f) => f.startsWith(folder)), changedFiles.join(', ')).toBe(true);
    await refreshAll();
    const apps = await waitSynced(sha, expectedAppNames());
    expect(apps.find((a) => a.metadata.name === app)?.status?.operationState?.syncResult?.revision).toBe(sha);

    const newTree = new Map(renderedObjects().map((o) => [objectKey(o), o]));
    const after = await liveByKey(kcA, [...oldTree.values()]);
    const changed: string[] = [];
    for (const key of oldTree.keys()) {
      const now = after.get(key);
      if (!newTree.has(key)) {
        expect(now, `${key} pruned`).toBeUndefined();
        changed.push(key);
      } else if (now?.metadata.resourceVersion !== before.get(key)?.metadata.resourceVersion && !key.startsWith('ResourceQuota/')) {
        // (kube-controller-manager's quota controller rewrites a ResourceQuota's status.used as pods come and go.)
        changed.push(key);
      }
    }
    const appObjects = new Set(tree.filter((t) => t.file.startsWith('instances/tenant-user-3/')).map((t) => objectKey(t.object)));
    for (const k of oldTree.keys()) if (k.includes('/tenant-user-3/') && !newTree.has(k)) appObjects.add(k);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.filter((k) => !appObjects.has(k))).toEqual([]);
    const dep = await live(kcA, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: 'tenant-user-3', name: 'inst-3' } } as KubeObject);
    expect(dep?.spec).toMatchObject({ replicas: 1 });
    expect(changed).toContain('Service/tenant-user-3/inst-3');
  }, 2 * SYNC_TIMEOUT);

  it('(c) a MyDrive PVC survives the deletion of its tenant\'s Application', async () => {
    // A tenant without Instances leaves the inputs: the root prunes its Application, whose
    // resources finalizer deletes what it deployed — but not the MyDrive PVC (Delete=false).
    const tenant = 'user.45';
    const pvcRef = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { namespace: config.mydrivePvcsNamespace, name: 'user-45-drive' } };
    const pvc = await getObject<KubeObject>(pvcRef, kcA);
    expect(ann(pvc)['argocd.argoproj.io/sync-options']).toBe('Prune=false,Delete=false');
    expect(inputs.some((o) => o.kind === 'Instance' && (o.spec as Record<string, { name: string }>)['tenant.crownlabs.polito.it/TenantRef'].name === tenant)).toBe(false);
    inputs = inputs.filter((o) => !(o.kind === 'Tenant' && o.metadata.name === tenant));
    render();
    const sha = await commitAll(repo, `remove ${tenant}`);
    await refreshAll();
    const appRef = { apiVersion: 'argoproj.io/v1alpha1', kind: 'Application', metadata: { namespace: config.argocdNamespace, name: `crownlabs-tenant-${tenant}` } };
    await waitFor(async () => !(await getObject(appRef, kcA)), { timeoutMs: SYNC_TIMEOUT, intervalMs: 1000, message: `Application crownlabs-tenant-${tenant} deleted` });
    await waitSynced(sha, expectedAppNames());
    // Its namespace stays too (Delete=false: deleting it would take every disk in it along)...
    const ns = await getObject<KubeObject>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-user-45' } }, kcA);
    expect(ns?.metadata.deletionTimestamp).toBeUndefined();
    // ...and so do its files.
    const after = await getObject<KubeObject>(pvcRef, kcA);
    expect(after?.metadata.uid).toBe(pvc!.metadata.uid);
    expect(after?.metadata.deletionTimestamp).toBeUndefined();
  }, 2 * SYNC_TIMEOUT);
});

/** What Argo CD reports that (a) does not expect, with the Applications and the objects they track. */
async function healthProblems(): Promise<{ apps: Application[]; tracked: Set<string>; problems: string[] }> {
  const apps = await applications(kcA, config.argocdNamespace);
  const tracked = new Set<string>();
  const problems = notSynced(apps, firstSha);
  for (const app of apps) {
    let worst = 'Healthy';
    for (const r of app.status?.resources ?? []) {
      tracked.add(objectKey({ kind: r.kind, metadata: { namespace: r.namespace || undefined, name: r.name } }));
      if (r.status !== 'Synced') problems.push(`${app.metadata.name} ${r.kind}/${r.name}: ${r.status}`);
      const health = r.health?.status ?? 'Healthy'; // no health check: counted as Healthy
      if (health !== 'Healthy') problems.push(`${app.metadata.name} ${r.kind}/${r.name}: ${JSON.stringify(r.health)}`);
      if (HEALTH_ORDER.indexOf(health) > HEALTH_ORDER.indexOf(worst)) worst = health;
    }
    if (app.status?.health?.status !== worst) problems.push(`${app.metadata.name}: health ${app.status?.health?.status}, its resources ${worst}`);
  }
  return { apps, tracked, problems };
}

interface SecretRow {
  namespace: string;
  name: string;
  keys: string[];
  application: string;
}

function secretsMd(): SecretRow[] {
  const text = readFileSync(path.join(gitopsDir(), 'SECRETS.md'), 'utf8');
  return text
    .split('\n')
    .filter((l) => /^\| [a-z0-9]/.test(l) && !l.startsWith('| namespace'))
    .map((l) => {
      const [namespace, name, keys, application] = l.split('|').slice(1, 5).map((c) => c.trim());
      return { namespace, name, keys: keys.split(',').map((k) => k.trim()).sort(), application };
    });
}

/** Names of the Secrets an object refers to (volumes, env, KubeVirt/CDI secretRefs, Ingress TLS, pull secrets). */
function secretNames(o: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (Array.isArray(v)) return v.forEach(walk);
    if (!v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if ((k === 'secretName' || k === 'secretRef' || k === 'imagePullSecret') && typeof x === 'string') out.push(x);
      else if ((k === 'secretRef' || k === 'secretKeyRef') && x && typeof x === 'object' && typeof (x as { name?: unknown }).name === 'string') out.push((x as { name: string }).name);
      else if (k === 'imagePullSecrets' && Array.isArray(x)) for (const s of x) out.push((s as { name: string }).name);
      walk(x);
    }
  };
  walk(o);
  return out;
}
