// Seed 004 (the ScienceData user pods backend) for real: `crownlabs user-pods-api`'s server over
// HTTP on 127.0.0.1, the manifests served by a local HTTP server, objects on the test cluster.
// kwok's fake Nodes run the pods (scheduled by kube-scheduler; Ready after the manifest's
// kwok.crownlabs.test/ready-delay; a graceful deletion finished, as a kubelet does once the
// containers stopped, after its delete-delay) and kube-controller-manager's protection controllers
// release a claim and its volume once no pod uses them. The tests only do what a user or an
// operator does, and wait for those components.
import { spawn } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../src/kube/client.ts';
import { legacyUserStorageName, userStorageName } from '../../src/model/user-pods.ts';
import { loadUserPodsConfig, type UserPodsConfig } from '../../src/user-pods/config.ts';
import { ExecPodFileReader } from '../../src/user-pods/pod-files.ts';
import { BearerToken, frontEndAuth } from '../../src/user-pods/auth.ts';
import { userPodsHandler } from '../../src/user-pods/server.ts';
import { UserPodsService } from '../../src/user-pods/service.ts';
import { FakePodFiles } from '../support/pod-files.ts';
import { adminKubeConfig, adminKubeConfigPath, createNamespace, deleteNamespace, REPO_ROOT, rest, waitFor } from './cluster.ts';

const run = randomBytes(3).toString('hex');
const ALICE = `alice${run}@dtu.dk`;
const BOB = `bob${run}@ku.dk`;
const CAROL = `carol${run}@sdu.dk`;
const DAVE = `dave${run}@au.dk`;
const user = (id: string) => id.replace(/[@.]/g, '-');
const podNameFor = (id: string) => `jupyter-${user(id)}`;

const MANIFESTS: Record<string, string> = {
  'jupyter.yaml': `apiVersion: v1
kind: Pod
metadata:
  name: jupyter
  annotations:
    sciencedata.dk/copy-token: token
    sciencedata.dk/ingress-port: "8888"
    kwok.crownlabs.test/ready-delay: 5s
    kwok.crownlabs.test/delete-delay: 2s
spec:
  containers:
    - name: jupyter
      image: LOCALREGISTRY/jupyter:latest
      ports: [{containerPort: 22}, {containerPort: 8888}]
      env: [{name: SSH_PUBLIC_KEY, value: ""}]
      volumeMounts: [{name: sciencedata, mountPath: /root/data}]
      resources: {limits: {cpu: "1", memory: 1Gi}}
`,
  'plain.yaml': `apiVersion: v1
kind: Pod
metadata: {name: plain}
spec:
  containers: [{name: main, image: busybox}]
`,
  'invalid.yaml': `apiVersion: v1
kind: Pod
metadata: {name: invalid}
spec:
  containers: [{name: main, image: busybox, ports: [{containerPort: "not-a-port"}]}]
`,
  'deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec: {}
`,
};

// The same pod, slower to stop (its containers take 8 s to exit on SIGTERM).
MANIFESTS['jupyter-slow-stop.yaml'] = MANIFESTS['jupyter.yaml'].replace('delete-delay: 2s', 'delete-delay: 8s');

/** Outside the whitelisted folder: a privileged pod with the node's root file system. */
const EVIL = `apiVersion: v1
kind: Pod
metadata: {name: evil}
spec:
  hostPID: true
  containers: [{name: main, image: busybox, securityContext: {privileged: true}, volumeMounts: [{name: root, mountPath: /host}]}]
  volumes: [{name: root, hostPath: {path: /}}]
`;

let manifestServer: http.Server;
let base = '';
let ns = '';
const files = new FakePodFiles();
const client = () => new KubeClient(adminKubeConfig());
const api = rest();
const log = pino({ level: process.env.USER_PODS_LOG ?? 'silent' });

interface Api {
  url: string;
  service: UserPodsService;
  close(): Promise<void>;
}

function config(over: Partial<UserPodsConfig> = {}): UserPodsConfig {
  const { config, problems } = loadUserPodsConfig({
    env: {
      BACKEND_NAMESPACE: ns,
      BACKEND_WHITELISTMANIFESTREGEX: `^${base.replace(/[.]/g, '[.]')}/manifests/`,
      BACKEND_TIMEOUTCREATE: '60s',
      BACKEND_TIMEOUTDELETE: '30s',
      BACKEND_TOKENBYTELIMIT: '16',
      BACKEND_INGRESSDOMAIN: 'pods.test',
      BACKEND_LOCALREGISTRYURL: 'registry.test:5000',
      BACKEND_HOSTNAMELIST: '[{"hostname":"silo7.sciencedata.test","address":"10.0.0.20"}]',
    },
  });
  expect(problems).toEqual([]);
  return { ...config, ...over };
}

/** The front end's bearer token (`--auth-token-file`): every request below carries it. */
const TOKEN = `front-end-${Math.random().toString(36).slice(2)}`;
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const authedFetch = (url: string, init: RequestInit = {}) => fetch(url, { ...init, headers: { ...AUTH, ...(init.headers as Record<string, string> | undefined) } });

const servers: Api[] = [];
async function startApi(over: Partial<UserPodsConfig> = {}): Promise<Api> {
  const cfg = config(over);
  const service = new UserPodsService({ client: client(), config: cfg, files, log, pollMs: 100, tokenAttempts: 3, tokenRetryMs: 100 });
  await service.start();
  const server = http.createServer(userPodsHandler(service, { testingHost: cfg.testingHost, log, auth: frontEndAuth({ token: BearerToken.fromValue(TOKEN) }) }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const a: Api = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    service,
    close: async () => {
      service.stop();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  servers.push(a);
  return a;
}

async function post(a: Api, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${a.url}${path}`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* text */
  }
  return { status: res.status, body: parsed };
}

const podPath = (name = '') => `/api/v1/namespaces/${ns}/pods${name ? `/${name}` : ''}`;
const get = (path: string) => api.request('GET', path).catch((e: { code?: number }) => (e.code === 404 ? undefined : Promise.reject(e)));
const podNames = async () => ((await api.request('GET', podPath())).items as { metadata: { name: string } }[]).map((p) => p.metadata.name).sort();


const storageOf = async (id: string, name = userStorageName(id)) => ({
  pv: await get(`/api/v1/persistentvolumes/${name}`),
  pvc: await get(`/api/v1/namespaces/${ns}/persistentvolumeclaims/${name}`),
});

beforeAll(async () => {
  manifestServer = http.createServer((req, res) => {
    const name = (req.url ?? '').replace(/^\/manifests\//, '');
    if (MANIFESTS[name]) res.writeHead(200, { 'Content-Type': 'application/yaml' }).end(MANIFESTS[name]);
    else if (req.url === '/evil/hostpath.yaml') res.writeHead(200, { 'Content-Type': 'application/yaml' }).end(EVIL);
    else if (name === 'redirect.yaml') res.writeHead(302, { Location: 'http://example.invalid/pod.yaml' }).end();
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => manifestServer.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(manifestServer.address() as AddressInfo).port}`;
  ns = await createNamespace('userpods');
  // Pods need the namespace's default ServiceAccount (made by the controller manager).
  await waitFor(() => get(`/api/v1/namespaces/${ns}/serviceaccounts/default`), { message: 'default ServiceAccount' });
});

afterAll(async () => {
  for (const s of servers) await s.close().catch(() => undefined);
  await new Promise<void>((r) => manifestServer?.close(() => r()));
  // Leftovers of a failed test: the namespace's pods and claims go with it, a volume once released.
  if (ns) await deleteNamespace(ns).catch(() => undefined);
  const pvs = ((await api.request('GET', '/api/v1/persistentvolumes')).items as any[]).filter((v) => v.metadata.name.includes(run));
  for (const v of pvs) await api.request('DELETE', `/api/v1/persistentvolumes/${v.metadata.name}`).catch(() => undefined);
});

describe('seed 004: create_pod, watch_create_pod, get_pods', () => {
  let a: Api;
  const pod = () => `jupyter-${user(ALICE)}`;
  beforeAll(async () => {
    a = await startApi();
  });

  it('create_pod answers {pod_name}: the pod from the manifest with the settings, the user storage PV and PVC', async () => {
    files.set(pod(), '/tmp/token', 'secret-token-that-is-longer-than-the-limit');
    const r = await post(a, '/create_pod', { yaml_url: `${base}/manifests/jupyter.yaml`, user_id: ALICE, settings: { jupyter: { SSH_PUBLIC_KEY: 'ssh-ed25519 AAAA' } } });
    expect(r).toEqual({ status: 200, body: { pod_name: pod() } });
    const live = await get(podPath(pod()));
    expect(live.metadata.labels).toMatchObject({ user: `alice${run}`, domain: 'dtu.dk', podName: pod() });
    const env = Object.fromEntries(live.spec.containers[0].env.map((e: any) => [e.name, e.value]));
    expect(env).toMatchObject({ SSH_PUBLIC_KEY: 'ssh-ed25519 AAAA', SD_UID: ALICE, HOME_SERVER_IP: '10.0.0.20', HOME_SERVER_HOSTNAME: 'silo7.sciencedata.test' });
    expect(live.spec.containers[0].image).toBe('registry.test:5000/jupyter:latest');
    expect(live.spec.imagePullSecrets).toEqual([{ name: 'docker-registry-auth' }]);
    expect(live.spec.restartPolicy).toBe('Never');
    expect(live.spec.volumes).toContainEqual({ name: 'sciencedata', persistentVolumeClaim: { claimName: userStorageName(ALICE) } });
    // Managed by server-side apply with our field manager.
    expect(live.metadata.managedFields.some((m: any) => m.manager === 'crownlabs-composer' && m.operation === 'Apply')).toBe(true);
    const storage = await storageOf(ALICE);
    expect(storage.pv.spec.nfs).toEqual({ server: '10.0.0.20', path: `/tank/storage/${ALICE}` });
    expect(storage.pvc.spec.volumeName).toBe(userStorageName(ALICE));
  });

  it('get_pods shows the pod as Creating before it is Ready', async () => {
    const r = await post(a, '/get_pods', { user_id: ALICE });
    expect(r.status).toBe(200);
    expect(r.body).toHaveLength(1);
    expect(r.body[0]).toMatchObject({ pod_name: pod(), container_name: 'jupyter', image_name: 'registry.test:5000/jupyter:latest', owner: ALICE, status: 'Creating', url: `https://${pod()}.pods.test` });
  });

  it('watch_create_pod of another user is false at once, and reveals nothing while the pod is creating', async () => {
    const started = Date.now();
    expect((await post(a, '/watch_create_pod', { user_id: BOB, pod_name: pod() })).body).toEqual({ ready: false });
    expect((await post(a, '/watch_create_pod', { user_id: BOB, pod_name: 'no-such-pod' })).body).toEqual({ ready: false });
    // Not after waiting for Alice's pod: the answer must not depend on it.
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('watch_create_pod waits until the pod is Ready and its start jobs ran: SSH Service, HTTP Service, Ingress, tokens', async () => {
    const watching = post(a, '/watch_create_pod', { user_id: ALICE, pod_name: pod() });
    let settled = false;
    void watching.then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(settled).toBe(false);
    expect((await watching).body).toEqual({ ready: true });
    const ssh = await get(`/api/v1/namespaces/${ns}/services/${pod()}-ssh`);
    expect(ssh.spec.type).toBe('NodePort');
    expect(ssh.spec.selector).toEqual({ user: `alice${run}`, domain: 'dtu.dk', podName: pod() });
    const ing = await get(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${pod()}-ingress`);
    expect(ing.spec.tls).toEqual([{ hosts: [`${pod()}.pods.test`], secretName: 'user-pods-wildcard' }]);
    expect(ing.spec.rules[0].http.paths[0].backend.service).toEqual({ name: `${pod()}-http`, port: { number: 8888 } });
    expect(files.reads.find((r) => r.pod === pod())).toMatchObject({ namespace: ns, container: 'jupyter', path: '/tmp/token', limit: 16 });
    // Once created, the answer comes from the cluster: true for the owner.
    expect((await post(a, '/watch_create_pod', { user_id: ALICE, pod_name: pod() })).body).toEqual({ ready: true });
  });

  it('get_pods: IPs, age, status Phase:start, url, tokens capped at tokenByteLimit, the SSH node port', async () => {
    const [info] = (await post(a, '/get_pods', { user_id: ALICE })).body;
    const ssh = await get(`/api/v1/namespaces/${ns}/services/${pod()}-ssh`);
    const { status } = await get(podPath(pod()));
    expect(info).toMatchObject({ pod_ip: status.podIP, node_ip: status.hostIP, owner: ALICE, url: `https://${pod()}.pods.test` });
    expect(info.status).toMatch(/^Running:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(info.age).toMatch(/^\d+:\d+:\d+$/);
    expect(info.tokens).toEqual({ token: 'secret-token-tha' });
    expect(info.k8s_pod_info).toEqual({ sshPort: String(ssh.spec.ports[0].nodePort) });
    expect(Object.keys(info).sort()).toEqual(['age', 'container_name', 'image_name', 'k8s_pod_info', 'node_ip', 'owner', 'pod_ip', 'pod_name', 'status', 'tokens', 'url']);
  });

  it('get_podip_owner names the owner of a pod IP; an unknown IP is 404, a bad one 400', async () => {
    const r = await authedFetch(`${a.url}/get_podip_owner?ip=${(await get(podPath(pod()))).status.podIP}`);
    expect([r.status, await r.text()]).toEqual([200, ALICE]);
    expect((await authedFetch(`${a.url}/get_podip_owner?ip=10.244.9.9`)).status).toBe(404);
    expect((await authedFetch(`${a.url}/get_podip_owner?ip=nonsense`)).status).toBe(400);
  });

  it('another user sees none of it: get_pods empty, delete_pod refused, watch_delete_pod true, the pod untouched', async () => {
    expect((await post(a, '/get_pods', { user_id: BOB })).body).toEqual([]);
    const del = await post(a, '/delete_pod', { user_id: BOB, pod_name: pod() });
    expect(del.status).toBe(400);
    expect(del.body.requested).toBe(false);
    expect((await post(a, '/watch_delete_pod', { user_id: BOB, pod_name: pod() })).body).toEqual({ deleted: true });
    expect(await get(podPath(pod()))).toBeDefined();
  });

  it('a second pod from the same manifest is <name>-<user>-1; watch_delete_pod of a live pod is false', async () => {
    const r = await post(a, '/create_pod', { yaml_url: `${base}/manifests/jupyter.yaml`, user_id: ALICE, settings: {} });
    expect(r.body).toEqual({ pod_name: `${pod()}-1` });
    expect((await post(a, '/watch_delete_pod', { user_id: ALICE, pod_name: `${pod()}-1` })).body).toEqual({ deleted: false });
  });

  it('delete_pod answers {requested}; watch_delete_pod waits for the pod to go; its objects go, the storage stays while another pod uses it', async () => {
    const r = await post(a, '/delete_pod', { user_id: ALICE, pod_name: pod() });
    expect(r).toEqual({ status: 200, body: { requested: true } });
    expect((await post(a, '/get_pods', { user_id: ALICE })).body.find((p: any) => p.pod_name === pod()).status).toBe('Deleting');
    expect((await post(a, '/delete_pod', { user_id: ALICE, pod_name: pod() })).body).toMatchObject({ requested: false, error: expect.stringMatching(/already being deleted/) });
    expect((await post(a, '/watch_delete_pod', { user_id: ALICE, pod_name: pod() })).body).toEqual({ deleted: true });
    expect(await get(podPath(pod()))).toBeUndefined();
    await waitFor(async () => (await get(`/api/v1/namespaces/${ns}/services/${pod()}-ssh`)) === undefined, { message: 'ssh service gone' });
    expect(await get(`/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses/${pod()}-ingress`)).toBeUndefined();
    expect(await get(`/api/v1/namespaces/${ns}/secrets/${pod()}-tokens`)).toBeUndefined();
    expect((await storageOf(ALICE)).pvc).toBeDefined();
  });

  it('delete_all_user deletes every pod of the user and the storage: {deleted: true}', async () => {
    const r = await post(a, '/delete_all_user', { user_id: ALICE });
    expect(r).toEqual({ status: 200, body: { deleted: true } });
    expect((await podNames()).filter((n) => n.includes(user(ALICE)))).toEqual([]);
    expect(await storageOf(ALICE)).toEqual({ pv: undefined, pvc: undefined });
    expect((await post(a, '/get_pods', { user_id: ALICE })).body).toEqual([]);
  });
});

describe('user ids that differ only in ".", "-" or "@" share nothing (#14.8)', () => {
  const HYPHEN = `anne-marie${run}@ku.dk`;
  const DOT = `anne.marie${run}@ku.dk`;
  const jupyter = () => `${base}/manifests/jupyter.yaml`;
  let a: Api;
  beforeAll(async () => {
    a = await startApi();
  });

  it('each gets their own PV/PVC at their own NFS path; delete_all_user of one leaves the other\'s pod and storage', async () => {
    const first = await post(a, '/create_pod', { yaml_url: jupyter(), user_id: HYPHEN });
    expect(first.status).toBe(200);
    const second = await post(a, '/create_pod', { yaml_url: jupyter(), user_id: DOT });
    expect(second.status).toBe(200);
    // Pod names follow the seed (not injective): the free one is taken; the labels say whose it is.
    expect(second.body.pod_name).toBe(`${first.body.pod_name}-1`);
    const [mine, theirs] = [await storageOf(HYPHEN), await storageOf(DOT)];
    expect(mine.pv.metadata.name).not.toBe(theirs.pv.metadata.name);
    expect(mine.pv.spec.nfs.path).toBe(`/tank/storage/${HYPHEN}`);
    expect(theirs.pv.spec.nfs.path).toBe(`/tank/storage/${DOT}`);
    expect((await post(a, '/delete_all_user', { user_id: DOT })).body).toEqual({ deleted: true });
    expect(await storageOf(DOT)).toEqual({ pv: undefined, pvc: undefined });
    const kept = await storageOf(HYPHEN);
    expect(kept.pv?.metadata.deletionTimestamp).toBeUndefined();
    expect(kept.pvc?.metadata.deletionTimestamp).toBeUndefined();
    expect((await post(a, '/get_pods', { user_id: HYPHEN })).body.map((p: any) => p.pod_name)).toEqual([first.body.pod_name]);
  });

  it('a reused pod name never shows the tokens left by an earlier pod of that name', async () => {
    // A token Secret labelled for the name DOT's next pod gets, but made for another pod instance
    // (owned by HYPHEN's live pod, so the garbage collector keeps it, as it would a leftover for a while).
    const name = `${podNameFor(HYPHEN)}-1`;
    const other = await get(podPath(podNameFor(HYPHEN)));
    await api.request('POST', `/api/v1/namespaces/${ns}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: `${name}-tokens`, labels: { createdForPod: name }, ownerReferences: [{ apiVersion: 'v1', kind: 'Pod', name: other.metadata.name, uid: other.metadata.uid }] },
        stringData: { token: 'someone-elses-token' },
      },
    });
    const r = await post(a, '/create_pod', { yaml_url: jupyter(), user_id: DOT });
    expect(r.body).toEqual({ pod_name: name });
    const [info] = (await post(a, '/get_pods', { user_id: DOT })).body;
    expect(info.tokens).toEqual({});
    // Deleting DOT's pod removes what was made for it, not objects of another pod instance.
    expect((await post(a, '/delete_pod', { user_id: DOT, pod_name: name })).body).toEqual({ requested: true });
    expect((await post(a, '/watch_delete_pod', { user_id: DOT, pod_name: name })).body).toEqual({ deleted: true });
    expect(await get(`/api/v1/namespaces/${ns}/secrets/${name}-tokens`)).toBeDefined();
    await api.request('DELETE', `/api/v1/namespaces/${ns}/secrets/${name}-tokens`);
  });

  it('storage under the old (unhashed) name is removed by delete_all_user of its exact owner only', async () => {
    const legacy = legacyUserStorageName(HYPHEN);
    expect(legacyUserStorageName(DOT)).toBe(legacy);
    const labels = { name: legacy, user: `anne-marie${run}`, domain: 'ku.dk' };
    await api.request('POST', '/api/v1/persistentvolumes', {
      body: { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: legacy, labels }, spec: { accessModes: ['ReadWriteMany'], capacity: { storage: '10Gi' }, nfs: { server: '10.0.0.20', path: `/tank/storage/${HYPHEN}` }, persistentVolumeReclaimPolicy: 'Retain', storageClassName: 'nfs' } },
    });
    await api.request('POST', `/api/v1/namespaces/${ns}/persistentvolumeclaims`, {
      body: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: legacy, labels }, spec: { accessModes: ['ReadWriteMany'], storageClassName: 'nfs', volumeName: legacy, resources: { requests: { storage: '10Gi' } } } },
    });
    expect((await post(a, '/delete_all_user', { user_id: DOT })).body).toEqual({ deleted: true });
    const untouched = await storageOf(HYPHEN, legacy);
    expect(untouched.pv?.metadata.deletionTimestamp).toBeUndefined();
    expect(untouched.pvc?.metadata.deletionTimestamp).toBeUndefined();
    expect((await post(a, '/delete_all_user', { user_id: HYPHEN })).body).toEqual({ deleted: true });
    expect(await storageOf(HYPHEN, legacy)).toEqual({ pv: undefined, pvc: undefined });
    expect(await storageOf(HYPHEN)).toEqual({ pv: undefined, pvc: undefined });
  });
});

describe('seed 004: creation times out and cleans up', () => {
  it('a pod not Ready within timeoutCreate is deleted with its storage; watch_create_pod answers false', async () => {
    const a = await startApi({ timeoutCreate: 1500 });
    const r = await post(a, '/create_pod', { yaml_url: `${base}/manifests/jupyter.yaml`, user_id: CAROL });
    expect(r.status).toBe(200);
    expect((await storageOf(CAROL)).pvc).toBeDefined();
    expect((await post(a, '/watch_create_pod', { user_id: CAROL, pod_name: r.body.pod_name })).body).toEqual({ ready: false });
    await waitFor(async () => (await get(podPath(r.body.pod_name))) === undefined, { message: 'timed-out pod deleted' });
    await waitFor(async () => { const s = await storageOf(CAROL); return !s.pv && !s.pvc; }, { message: 'storage deleted' });
    await a.close();
  });
});

describe('seed 004: state is recovered from the cluster after a restart', () => {
  it('a new server resumes a creation under way on its own, and serves the tokens and SSH port of a ready pod', async () => {
    const first = await startApi();
    const name = `jupyter-${user(DAVE)}`;
    files.set(name, '/tmp/token', 'dave-token');
    const r = await post(first, '/create_pod', { yaml_url: `${base}/manifests/jupyter-slow-stop.yaml`, user_id: DAVE });
    expect(r.body).toEqual({ pod_name: name });
    await first.close();

    const second = await startApi();
    expect((await post(second, '/get_pods', { user_id: DAVE })).body[0]).toMatchObject({ pod_name: name, status: 'Creating' });
    // Nobody asks: the creation resumed at start finishes the start jobs by itself.
    await waitFor(async () => (await get(podPath(name)))?.metadata.annotations['userpods.crownlabs.polito.it/state'] === 'ready', { message: 'start jobs by the resumed creation' });
    expect(await get(`/api/v1/namespaces/${ns}/services/${name}-ssh`)).toBeDefined();
    expect((await post(second, '/watch_create_pod', { user_id: DAVE, pod_name: name })).body).toEqual({ ready: true });
    await second.close();

    const third = await startApi();
    const [info] = (await post(third, '/get_pods', { user_id: DAVE })).body;
    expect(info).toMatchObject({ pod_name: name, pod_ip: (await get(podPath(name))).status.podIP, owner: DAVE, tokens: { token: 'dave-token' } });
    expect(info.k8s_pod_info.sshPort).toMatch(/^\d+$/);
    expect(info.status).toMatch(/^Running:/);
    expect((await post(third, '/watch_create_pod', { user_id: DAVE, pod_name: name })).body).toEqual({ ready: true });
    // A deletion requested from one server is watched to its end by the next, which also removes the
    // storage: the next one starts while the pod's containers are still stopping.
    expect((await post(third, '/delete_pod', { user_id: DAVE, pod_name: name })).body).toEqual({ requested: true });
    await third.close();
    const fourth = await startApi();
    expect((await post(fourth, '/get_pods', { user_id: DAVE })).body[0]).toMatchObject({ pod_name: name, status: 'Deleting' });
    expect((await post(fourth, '/watch_delete_pod', { user_id: DAVE, pod_name: name })).body).toEqual({ deleted: true });
    await waitFor(async () => { const st = await storageOf(DAVE); return !st.pv && !st.pvc; }, { message: 'storage deleted by the next server' });
    await fourth.close();
  });
});

describe('seed 004: bad input is a 4xx with a clear message, nothing is created, the server keeps serving', () => {
  let a: Api;
  beforeAll(async () => {
    a = await startApi();
  });
  // Bodies are built when the test runs: the manifest server's address is known only then.
  const cases: [string, string, () => unknown, RegExp][] = [
    ['a non-JSON body', '/create_pod', () => 'yaml_url=x', /the body must be JSON/],
    ['a missing user_id', '/create_pod', () => ({ yaml_url: `${base}/manifests/plain.yaml` }), /must have required property 'user_id'/],
    ['settings that are not strings', '/create_pod', () => ({ yaml_url: `${base}/manifests/plain.yaml`, user_id: BOB, settings: { main: { A: 1 } } }), /settings\.main\.A must be string/],
    ['a URL outside the whitelist', '/create_pod', () => ({ yaml_url: 'http://127.0.0.2/manifests/plain.yaml', user_id: BOB }), /not matched by the manifest whitelist/],
    ['a ".." segment out of the whitelisted folder', '/create_pod', () => ({ yaml_url: `${base}/manifests/../evil/hostpath.yaml`, user_id: BOB }), /not matched by the manifest whitelist/],
    ['an encoded ".." segment', '/create_pod', () => ({ yaml_url: `${base}/manifests/%2e%2e/evil/hostpath.yaml`, user_id: BOB }), /not matched by the manifest whitelist/],
    ['the whitelisted URL in the query of another', '/create_pod', () => ({ yaml_url: `${base.replace('127.0.0.1', '127.0.0.2')}/evil/hostpath.yaml?${base}/manifests/`, user_id: BOB }), /not matched by the manifest whitelist/],
    ['the whitelisted host as userinfo', '/create_pod', () => ({ yaml_url: `http://127.0.0.1@${base.slice('http://'.length)}/evil/hostpath.yaml`, user_id: BOB }), /not matched by the manifest whitelist/],
    ['a manifest that is not there', '/create_pod', () => ({ yaml_url: `${base}/manifests/missing.yaml`, user_id: BOB }), /HTTP 404/],
    ['a redirect', '/create_pod', () => ({ yaml_url: `${base}/manifests/redirect.yaml`, user_id: BOB }), /redirects are not followed/],
    ['a manifest that is not a Pod', '/create_pod', () => ({ yaml_url: `${base}/manifests/deployment.yaml`, user_id: BOB }), /expected apiVersion v1 kind Pod/],
    ['an invalid Pod', '/create_pod', () => ({ yaml_url: `${base}/manifests/invalid.yaml`, user_id: BOB }), /invalid manifest .*containerPort/],
    ['a user_id that cannot be a label value', '/create_pod', () => ({ yaml_url: `${base}/manifests/plain.yaml`, user_id: 'bob smith@ku.dk' }), /must be name@domain/],
    ['a missing pod_name', '/watch_create_pod', () => ({ user_id: BOB }), /pod_name/],
    ['a user_id that is not a string', '/get_pods', () => ({ user_id: 7 }), /user_id must be string/],
  ];
  for (const [what, path, body, message] of cases) {
    it(`${what}: 400 on ${path}`, async () => {
      const before = await podNames();
      const r = await post(a, path, body());
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(message);
      expect(await podNames()).toEqual(before);
      expect((await storageOf(BOB)).pvc).toBeUndefined();
      expect((await post(a, '/get_pods', { user_id: BOB })).status).toBe(200);
    });
  }
  it('an unreachable manifest host: 400', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const b = await startApi({ manifestUrlPrefixes: [`http://127.0.0.1:${port}/manifests/`] });
    const r = await post(b, '/create_pod', { yaml_url: `http://127.0.0.1:${port}/manifests/plain.yaml`, user_id: BOB });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/could not fetch the manifest .*ECONNREFUSED/);
    await b.close();
  });
  it('GET on a POST endpoint is 405, an unknown path 404', async () => {
    expect((await authedFetch(`${a.url}/get_pods`)).status).toBe(405);
    expect((await authedFetch(`${a.url}/nope`, { method: 'POST', body: '{}' })).status).toBe(404);
  });
});

describe('seed 004: the token copy reads through the API server\'s exec', () => {
  it('ExecPodFileReader rejects with a clear error when the pod cannot exec (no kubelet here)', async () => {
    const reader = new ExecPodFileReader(adminKubeConfig(), 5000);
    await expect(reader.read(ns, 'no-such-pod', 'main', '/tmp/token', 16)).rejects.toThrow();
  });
});

describe('crownlabs user-pods-api', () => {
  it('the command serves the API on every interface behind its --auth-token-file, re-read when the file changes', async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const tokenDir = mkdtempSync(path.join(tmpdir(), 'user-pods-token-'));
    const tokenFile = path.join(tokenDir, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'crownlabs.js'), 'user-pods-api', '--listen', `0.0.0.0:${port}`, '--auth-token-file', tokenFile, '--kubeconfig', adminKubeConfigPath()], {
      env: { ...process.env, BACKEND_NAMESPACE: ns, BACKEND_WHITELISTMANIFESTREGEX: `^${base}/manifests/` },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const url = `http://127.0.0.1:${port}`;
      await waitFor(async () => (await fetch(`${url}/healthz`)).ok, { timeoutMs: 60_000, message: `the command to listen (${stderr})` });
      expect((await fetch(`${url}/get_pods`, { method: 'POST', body: JSON.stringify({ user_id: BOB }) })).status).toBe(401);
      const r = await authedFetch(`${url}/get_pods`, { method: 'POST', body: JSON.stringify({ user_id: BOB }) });
      expect([r.status, await r.json()]).toEqual([200, []]);
      const bad = await authedFetch(`${url}/create_pod`, { method: 'POST', body: JSON.stringify({ user_id: BOB, yaml_url: 'https://elsewhere.example/p.yaml' }) });
      expect(bad.status).toBe(400);
      // A rotated token: the old one stops working, the new one works, without a restart.
      writeFileSync(`${tokenFile}.new`, 'rotated-token');
      renameSync(`${tokenFile}.new`, tokenFile);
      await waitFor(async () => (await fetch(`${url}/get_pods`, { method: 'POST', headers: { Authorization: 'Bearer rotated-token' }, body: JSON.stringify({ user_id: BOB }) })).status === 200, {
        timeoutMs: 10_000,
        message: 'the rotated token to be accepted',
      });
      expect((await authedFetch(`${url}/get_pods`, { method: 'POST', body: JSON.stringify({ user_id: BOB }) })).status).toBe(401);
    } finally {
      rmSync(tokenDir, { recursive: true, force: true });
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
