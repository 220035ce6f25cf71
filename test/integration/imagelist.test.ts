// §10 for real: a real Docker Registry (Debian's docker-registry, started by the test) filled
// through its HTTP API, `crownlabs imagelist` (the real binary) run against it, and the ImageList
// checked on the test cluster's real API server.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dockerRegistryAvailable, startRegistry, type TestRegistry } from '../support/docker-registry.ts';
import { freePort } from '../support/free-port.ts';
import { adminKubeConfigPath, deleteObject, getObject, REPO_ROOT, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'crownlabs.js');
const ref = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'ImageList', metadata: { name } });

if (!dockerRegistryAvailable()) {
  throw new Error('docker-registry is not installed: run scripts/ensure-docker-registry.sh (CI calls it before the tests)');
}

function imagelist(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, 'imagelist', '--kubeconfig', adminKubeConfigPath(), ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  return { code: r.status, stderr: r.stderr };
}

/** 7 repositories (more than 3 catalog pages of 2), with tags pushed out of order. */
const PUSHES: [string, string][] = [
  ['ubuntu', '22.04'], ['ubuntu', 'latest'], ['ubuntu', '20.04'], ['ubuntu', '9.10'],
  ['netlab/router', 'v10'], ['netlab/router', 'v2'],
  ['only-latest', 'latest'],
  ['debian', '12'], ['debian', '11'],
  ['alpine', '3.20'], ['alpine', '3.9'],
  ['john/snap', '20230714t153012'], ['john/snap', '20230102t000000'],
  ['centos', '7'],
];
const EXPECTED = [
  { name: 'alpine', versions: ['3.9', '3.20'] },
  { name: 'centos', versions: ['7'] },
  { name: 'debian', versions: ['11', '12'] },
  { name: 'john/snap', versions: ['20230102t000000', '20230714t153012'] },
  { name: 'netlab/router', versions: ['v2', 'v10'] },
  { name: 'ubuntu', versions: ['9.10', '20.04', '22.04'] },
];

describe('§10 crownlabs imagelist against a real registry', () => {
  let registry: TestRegistry;
  const names: string[] = [];
  beforeAll(async () => {
    registry = await startRegistry();
    for (const [repo, tag] of PUSHES) await registry.push(repo, tag);
  });
  afterAll(async () => {
    await registry?.stop();
    for (const n of names) await deleteObject(ref(n));
  });

  it('reads every catalog page and writes the sorted list, latest removed, empty images dropped', async () => {
    const name = uniqueName('images');
    names.push(name);
    const r = imagelist(['--once', '--advertised-registry-name', 'registry.crownlabs.example.com', '--image-list-name', name, '--registry-url', registry.url, '--page-size', '2']);
    expect(r.stderr).toMatch(/ImageList .* applied: 6 images, 12 versions \(7 repositories\)/);
    expect(r.code).toBe(0);
    const live = await getObject<KubeObject & { spec: unknown }>(ref(name));
    expect(live!.spec).toEqual({ registryName: 'registry.crownlabs.example.com', images: EXPECTED });
    expect((live!.metadata.managedFields as { manager: string }[]).map((f) => f.manager)).toContain('crownlabs-imagelist');
  });

  it('keeps labels and annotations others put on the ImageList (server-side apply, not replace)', async () => {
    const name = uniqueName('images');
    names.push(name);
    await serverSideApply(
      { ...ref(name), metadata: { name, labels: { team: 'ops' }, annotations: { note: 'keep me' } }, spec: { registryName: 'old', images: [{ name: 'gone', versions: ['1'] }] } },
      { fieldManager: 'someone-else' },
    );
    const r = imagelist(['--once', '--advertised-registry-name', 'reg.example', '--image-list-name', name, '--registry-url', registry.url]);
    expect(r.code).toBe(0);
    const live = await getObject<KubeObject & { spec: { registryName: string; images: unknown[] } }>(ref(name));
    expect(live!.metadata.labels).toEqual({ team: 'ops' });
    expect(live!.metadata.annotations).toEqual({ note: 'keep me' });
    expect(live!.spec).toEqual({ registryName: 'reg.example', images: EXPECTED });
  });

  it('an unreachable registry is one logged line, exit 1 with --once, and nothing written', async () => {
    const name = uniqueName('images');
    const port = await freePort(); // nothing listens there any more
    const r = imagelist(['--once', '--advertised-registry-name', 'r', '--image-list-name', name, '--registry-url', `http://127.0.0.1:${port}`, '--registry-timeout', '2']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/registry error, ImageList .* left unchanged: GET http:\/\/127\.0\.0\.1:\d+\/v2\/_catalog\?n=100: ECONNREFUSED/);
    expect(await getObject(ref(name))).toBeUndefined();
  });

  it('the loop runs immediately, then every --update-interval, and picks up a new push', async () => {
    const name = uniqueName('images');
    names.push(name);
    const child = spawn(process.execPath, [BIN, 'imagelist', '--kubeconfig', adminKubeConfigPath(), '--advertised-registry-name', 'r', '--image-list-name', name, '--registry-url', registry.url, '--update-interval', '1'], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      await waitFor(() => getObject(ref(name)), { timeoutMs: 30_000, message: 'first pass' });
      await registry.push('zeta', '1');
      const live = await waitFor(async () => {
        const o = await getObject<KubeObject & { spec: { images: { name: string }[] } }>(ref(name));
        return o?.spec.images.some((i) => i.name === 'zeta') ? o : undefined;
      }, { timeoutMs: 30_000, message: 'the new image in the ImageList' });
      expect(live.spec.images.map((i) => i.name)).toEqual([...EXPECTED.map((i) => i.name), 'zeta']);
    } finally {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    expect(stderr).not.toMatch(/error/);
  });
});

describe('§10 registry with basic auth (htpasswd, bcrypt)', () => {
  let registry: TestRegistry;
  const name = uniqueName('images');
  beforeAll(async () => {
    registry = await startRegistry({ auth: { username: 'reader', password: 's3cret pass' } });
    await registry.push('private/vm', '1.0');
    await registry.push('private/vm', '1.1');
  });
  afterAll(async () => {
    await registry?.stop();
    await deleteObject(ref(name));
  });

  it('without credentials: HTTP 401 logged, nothing written', () => {
    const r = imagelist(['--once', '--advertised-registry-name', 'r', '--image-list-name', name, '--registry-url', registry.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/registry error.*HTTP 401/);
  });

  it('with --registry-username and the password from the environment: the list is written', async () => {
    const r = imagelist(['--once', '--advertised-registry-name', 'r', '--image-list-name', name, '--registry-url', registry.url, '--registry-username', 'reader'], {
      CROWNLABS_REGISTRY_PASSWORD: 's3cret pass',
    });
    expect(r.stderr).toMatch(/applied: 1 images, 2 versions/);
    expect(r.code).toBe(0);
    expect((await getObject<KubeObject & { spec: unknown }>(ref(name)))!.spec).toEqual({ registryName: 'r', images: [{ name: 'private/vm', versions: ['1.0', '1.1'] }] });
  });
});
