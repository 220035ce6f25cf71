// §12 for real: `crownlabs bastion-keys` (the real binary) watches Tenants on the test cluster with
// only the rights the BastionChart grants (its ClusterRole, bound to the bastion ServiceAccount,
// authenticated here as that ServiceAccount's user name), and keeps an authorized_keys file.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Testing } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BastionChart } from '../../constructs/bastion/bastion-chart.ts';
import {
  createObject,
  deleteObject,
  REPO_ROOT,
  rest,
  serverSideApply,
  TEST_CLUSTER_SCRIPT,
  testClusterDir,
  uniqueName,
  waitFor,
  type KubeObject,
} from './cluster.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'crownlabs.js');
const id = uniqueName('bk');
const ALICE = `alice.${id}`;
const BOB = `bob.${id}`;
const tenantRef = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name } });

function tenant(name: string, publicKeys: string[]): KubeObject {
  return { ...tenantRef(name), spec: { firstName: 'F', lastName: 'L', email: `${name}@example.com`, publicKeys } };
}

/** Our tenants' lines and the hand-written ones; Tenants of other test files are left out. */
function ours(): string[] {
  return readFileSync(keysFile, 'utf8')
    .split('\n')
    .filter((l) => l.endsWith(` ${ALICE}`) || l.endsWith(` ${BOB}`) || l.startsWith('#') || l.endsWith(' stale-manual'));
}

let keysFile: string;
let child: ChildProcess;
let log = '';
let rbacObjects: KubeObject[];

describe('§12 crownlabs bastion-keys against the API server', () => {
  beforeAll(async () => {
    // The chart's RBAC, under a unique name; the command authenticates as its ServiceAccount.
    const name = `ssh-bastion-${id}`;
    const objects = new BastionChart(Testing.app(), 'b', { name, namespace: 'default', sshdImage: 's', composerImage: 'c' }).toJson() as KubeObject[];
    rbacObjects = objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding');
    await serverSideApply(rbacObjects);
    const dir = testClusterDir();
    const kubeconfig = execFileSync(TEST_CLUSTER_SCRIPT, ['kubeconfig', `system:serviceaccount:default:${name}`], {
      encoding: 'utf8',
      env: { ...process.env, ...(dir ? { TEST_CLUSTER_DIR: dir } : {}) },
    })
      .trim()
      .split('\n')
      .pop()!;

    await createObject(tenant(ALICE, ['ssh-ed25519 AAAAalice1 alice@laptop', 'ssh-rsa AAAAalice2']));
    await createObject(tenant(BOB, ['ssh-rsa AAAAbob1 bob@pc', 'not-a-key']));
    keysFile = path.join(mkdtempSync(path.join(tmpdir(), 'bastion-')), 'authorized_keys');
    writeFileSync(keysFile, ['# kept by hand', `ssh-rsa AAAAstale ${BOB}`, 'ssh-rsa AAAAmanual stale-manual'].join('\n'));
    child = spawn(process.execPath, [BIN, 'bastion-keys', '--kubeconfig', kubeconfig], {
      cwd: REPO_ROOT,
      env: { ...process.env, AUTHORIZED_KEYS_PATH: keysFile },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    await waitFor(() => /watching Tenants/.test(log), { timeoutMs: 30_000, message: `bastion-keys to start (log: ${log})` });
  });

  afterAll(async () => {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    for (const n of [ALICE, BOB]) await deleteObject(tenantRef(n));
    for (const o of rbacObjects ?? []) await deleteObject(o);
  });

  it('the full sync at start writes every Tenant\'s keys as `<algo> <key> <tenant>`, keeping other lines', () => {
    expect(ours()).toEqual([
      '# kept by hand',
      'ssh-rsa AAAAmanual stale-manual',
      `ssh-ed25519 AAAAalice1 ${ALICE}`,
      `ssh-rsa AAAAalice2 ${ALICE}`,
      `ssh-rsa AAAAbob1 ${BOB}`,
    ]);
    expect(log).toContain(`Tenant ${BOB}: publicKeys[1] skipped: fewer than 2 space-separated fields`);
    expect(readFileSync(keysFile, 'utf8').endsWith('\n')).toBe(false);
  });

  it('a Tenant update replaces its lines at the end, the other lines keep their order', async () => {
    const c = rest();
    await c.request('PATCH', await c.resourcePath('crownlabs.polito.it/v1alpha2', 'Tenant', null, ALICE), {
      body: { spec: { publicKeys: ['ssh-ed25519 AAAAalice3 new'] } },
      contentType: 'application/merge-patch+json',
    });
    await waitFor(() => ours().includes(`ssh-ed25519 AAAAalice3 ${ALICE}`), { timeoutMs: 15_000, message: 'the update in the file' });
    expect(ours()).toEqual(['# kept by hand', 'ssh-rsa AAAAmanual stale-manual', `ssh-rsa AAAAbob1 ${BOB}`, `ssh-ed25519 AAAAalice3 ${ALICE}`]);
  });

  it('a deleted Tenant loses its lines', async () => {
    await deleteObject(tenantRef(BOB));
    await waitFor(() => !ours().some((l) => l.endsWith(` ${BOB}`)), { timeoutMs: 15_000, message: 'bob to be removed' });
    expect(ours()).toEqual(['# kept by hand', 'ssh-rsa AAAAmanual stale-manual', `ssh-ed25519 AAAAalice3 ${ALICE}`]);
  });
});
