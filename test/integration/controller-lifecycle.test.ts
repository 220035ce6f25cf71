// The apply-controller's lifecycle against the real test cluster, as installed (test/integration/
// as-installed.ts) but for the leader-election and CLI tests: Keycloak sync (HTTP double),
// finalizers and deletion (Workspace unsubscribes its Tenants, docs/behaviour.md §4.5), MyDrive share from the
// bound PV, leader election through a Lease, and the real CLI with /healthz, /readyz, /metrics.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/free-port.ts';
import { KeycloakDouble } from '../support/keycloak-double.ts';
import { adminKubeConfig, adminKubeConfigPath, getObject, REPO_ROOT, rest, waitFor } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, lab, labConfig, patch, runController, shardName, type RunningController } from './controller-support.ts';
import { createMyDriveVolumes, removeMyDriveVolumes } from './mydrive-volumes.ts';
import { removeInstall, runInstalledController, type InstalledController } from './as-installed.ts';

const tenantRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name } });
const workspaceRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name } });

describe('controller lifecycle: Keycloak, deletion, MyDrive', () => {
  const shard = shardName('clc');
  const l = lab(shard);
  let kc: KeycloakDouble;
  let ctl: InstalledController;
  const config = labConfig(shard);
  const pvOwner = `${shard}-lifecycle`;

  beforeAll(async () => {
    kc = await KeycloakDouble.start();
    Object.assign(config, {
      keycloakUrl: kc.url,
      keycloakLoginRealm: 'master',
      keycloakTargetRealm: 'crownlabs',
      keycloakTargetClient: 'k8s',
      keycloakUser: 'admin',
      keycloakPassword: 'admin-secret',
    });
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    for (const o of l.inputs.cluster) await create(o);
    ctl = await runInstalledController(config);
    await waitFor(async () => (await getObject<any>(tenantRef(l.tenants[0])))?.status?.ready !== undefined, { message: 'tenant status' });
    await ctl.handle.idle();
  });
  afterAll(async () => {
    await ctl?.stop();
    await cleanupLab(l);
    await removeMyDriveVolumes(adminKubeConfig(), pvOwner);
    await kc?.close();
    await removeInstall(ctl);
  });

  it('creates the workspace roles and the tenant users with their roles', async () => {
    expect(kc.clientRole('crownlabs', 'k8s', `workspace-${l.workspace}:manager`)?.description).toBe('Networks');
    expect(kc.clientRole('crownlabs', 'k8s', `workspace-${l.workspace}:user`)).toBeDefined();
    expect(kc.findUser('crownlabs', l.tenants[0])?.email).toBe('alice@example.org');
    expect(kc.userClientRoles('crownlabs', l.tenants[1], 'k8s')).toEqual([`workspace-${l.workspace}:manager`]);
    const ws = await getObject<any>(workspaceRef(l.workspace));
    expect(ws.status.subscription).toEqual({ keycloak: 'Ok' });
    const t = await getObject<any>(tenantRef(l.tenants[0]));
    expect(t.status.subscriptions).toEqual({ keycloak: 'Ok' });
  });

  it('a Keycloak failure is reported in status (Failed, not ready) and a Warning Event, then recovers', async () => {
    kc.failNext({ path: /\/users/, times: Infinity, status: 500 });
    await patch(tenantRef(l.tenants[0]), { spec: { firstName: 'Alicia' } });
    await waitFor(async () => (await getObject<any>(tenantRef(l.tenants[0]))).status.subscriptions.keycloak === 'Failed', { message: 'keycloak Failed' });
    const t = await getObject<any>(tenantRef(l.tenants[0]));
    expect(t.status.ready).toBe(false);
    expect(t.status.personalNamespace.created).toBe(true); // the rest of the status is still written
    const events = await rest().request('GET', '/api/v1/namespaces/default/events', { query: { fieldSelector: `involvedObject.name=${l.tenants[0]}` } });
    expect(events.items.some((e: any) => e.type === 'Warning' && /keycloak/.test(e.message))).toBe(true);
    kc.clearFaults();
    await waitFor(async () => (await getObject<any>(tenantRef(l.tenants[0]))).status.ready === true, { timeoutMs: 30_000, message: 'recovered after back-off' });
    expect(kc.findUser('crownlabs', l.tenants[0])?.firstName).toBe('Alicia');
  });

  it('renders mydrive-info from the PV the MyDrive PVC is bound to (bound by kube-controller-manager)', async () => {
    // What the NFS provisioner creates (here beforehand, mydrive-volumes.ts): a PV reserved for the
    // claim, with the CSI attributes of the share. kube-controller-manager's PV binder binds the two.
    const claim = `${shard}-alice-drive`;
    const pvs = await createMyDriveVolumes(adminKubeConfig(), config, [{ claim, attributes: { server: 'nfs-server', clusterID: 'rook', share: `/export/${shard}` } }], pvOwner);
    const pvc = await waitFor(async () => {
      const p = await getObject<any>({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: claim, namespace: config.mydrivePvcsNamespace } });
      return p?.status?.phase === 'Bound' ? p : undefined;
    }, { timeoutMs: 60_000, message: 'MyDrive PVC Bound' });
    expect(pvc.spec.volumeName).toBe(pvs.get(claim));
    const secret = await waitFor(() => getObject<any>({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: l.tenantNs } }), { message: 'mydrive-info' });
    const data = Object.fromEntries(Object.entries(secret.data as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    expect(data).toEqual({ 'server-name': 'nfs-server.rook', path: `/export/${shard}` });
  });

  it('deleting a Workspace removes its roles and unsubscribes its Tenants, then releases the finalizer', async () => {
    expect((await getObject<any>(workspaceRef(l.workspace))).metadata.finalizers).toContain('crownlabs.polito.it/tenant-operator');
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha1/workspaces/${l.workspace}`);
    await waitFor(async () => !(await getObject(workspaceRef(l.workspace))), { message: 'workspace gone' });
    const bob = await getObject<any>(tenantRef(l.tenants[1]));
    expect(bob.spec.workspaces ?? []).toEqual([]);
    expect(kc.clientRole('crownlabs', 'k8s', `workspace-${l.workspace}:manager`)).toBeUndefined();
    await waitFor(async () => (await getObject<any>(tenantRef(l.tenants[1]))).metadata.labels['crownlabs.polito.it/no-workspaces'] === 'true', { message: 'bob no-workspaces' });
  });

  it('deleting a Tenant deletes its Keycloak user and releases the finalizer', async () => {
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/tenants/${l.tenants[1]}`);
    await waitFor(async () => !(await getObject(tenantRef(l.tenants[1]))), { message: 'tenant gone' });
    expect(kc.findUser('crownlabs', l.tenants[1])).toBeUndefined();
  });
});

describe('controller operations', () => {
  it('leader election: a second controller waits for the Lease and takes over when the first stops', async () => {
    const shard = shardName('cle');
    const config = labConfig(shard);
    const leaseName = `${shard}-lease`;
    const a = await runController(config, { enableLeaderElection: true, leaderElectionId: leaseName, leaderElectionNamespace: 'default' });
    let bStarted = false;
    const bPromise = runController(config, { enableLeaderElection: true, leaderElectionId: leaseName, leaderElectionNamespace: 'default' }).then((b) => {
      bStarted = true;
      return b;
    });
    await new Promise((r) => setTimeout(r, 3000));
    expect(bStarted).toBe(false);
    await a.handle.stop();
    const b = await bPromise;
    expect(bStarted).toBe(true);
    const lease = await rest().request('GET', `/apis/coordination.k8s.io/v1/namespaces/default/leases/${leaseName}`);
    expect(lease.spec.leaseTransitions).toBeGreaterThanOrEqual(1);
    await b.handle.stop();
  });

  it('the CLI serves /healthz, /readyz and /metrics, and stops on SIGTERM', async () => {
    const [mp, hp] = [await freePort(), await freePort()];
    const child: ChildProcess = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'bin/crownlabs.js'), 'controller', '--kubeconfig', adminKubeConfigPath(), '--metrics-addr', `127.0.0.1:${mp}`, '--no-metrics-secure', '--health-probe-addr', `127.0.0.1:${hp}`, '--target-label', `${'crownlabs.polito.it/operator-selector'}=${shardName('cli')}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const ok = (url: string) => fetch(url).then((r) => r.status).catch(() => 0);
      await waitFor(async () => (await ok(`http://127.0.0.1:${hp}/readyz`)) === 200, { timeoutMs: 60_000, message: `readyz (output: ${out})` });
      expect(await ok(`http://127.0.0.1:${hp}/healthz`)).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${mp}/metrics`)).text();
      expect(metrics).toContain('crownlabs_controller_reconcile_duration_seconds');
      expect(metrics).toContain('crownlabs_controller_queue_depth');
      expect(out).toContain('"msg":"caches synced"');
    } finally {
      child.kill('SIGTERM');
    }
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    expect(out).toContain('"msg":"stopped"');
  });
});
