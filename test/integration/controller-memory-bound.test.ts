// The controller's memory is bounded whatever is created with our label (docs/behaviour.md §0.8):
// 1 GiB of Secrets carrying our managed-by label and a parent annotation that passes the child
// guard (so the cache keeps each one, as a digest), created while the controller runs as its own
// process (`node bin/crownlabs.js controller`, as the Deployment runs it), then listed whole by a
// second controller process started afterwards (a restart: the list pages). Both processes' peak
// RSS (VmHWM) stays far below the Deployment's 512Mi limit, and both keep reconciling Tenants.
// The Secrets are deleted as soon as the measure is taken: the cluster's etcd is shared (its
// default 2 GiB quota holds them; the API server compacts the deleted ones within 5 minutes).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPOSER } from '../../src/model/labels.ts';
import { envVarName } from '../../src/config/keys.ts';
import { bundledEntry, CLI_ENTRY } from '../../src/runtime/bundle.mjs';
import { adminKubeConfigPath, createNamespace, getObject, rest, testClusterDir, waitFor, type KubeObject } from './cluster.ts';
import { create, deleteNamespaceWithPvcs, patch, SELECTOR, shardName } from './controller-support.ts';

const SECRETS = 1200;
const SECRET_BYTES = 900 * 1024;
const CONCURRENCY = 6;
/** Peak RSS allowed to a controller process: well below the Deployment's 512Mi (platformControllerMemory). */
const RSS_BOUND_MB = 350;

const shard = shardName('mem');
const mydriveNs = `${shard}-mydrive`;
const tenants: string[] = [];
const controllers: ChildProcess[] = [];
let floodNs: string;

function tenant(name: string): KubeObject {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name, labels: { [SELECTOR]: shard } },
    spec: { firstName: 'M', lastName: 'B', email: `${name}@example.org`, lastLogin: new Date().toISOString(), createSandbox: true, workspaces: [] },
  };
}

/** `VmHWM` (peak) and `VmRSS` of a process, in MiB. */
function memoryOf(pid: number): { hwm: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)![1]);
  return { hwm: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 };
}

function startControllerProcess(): ChildProcess {
  const args = [
    'bin/crownlabs.js', 'controller',
    '--kubeconfig', adminKubeConfigPath(),
    '--target-label', `${SELECTOR}=${shard}`,
    '--namespace-whitelist', `${SELECTOR}=${shard}`,
    '--mydrive-pvcs-namespace', mydriveNs,
    '--website-base-url', 'crownlabs.test',
    '--metrics-addr', '127.0.0.1:0',
    '--health-probe-addr', '127.0.0.1:0',
    '--webhook-port', '0',
    '--max-concurrent-reconciles', '4',
  ];
  // The Deployment's environment (constructs/platform/controller-shard.ts): glibc arenas capped.
  const env = { ...process.env, MALLOC_ARENA_MAX: '2', [envVarName('cookieSecretSeed')]: 'memory-bound-seed-0123456789abcdef0123456789' };
  const c = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', process.env.CONTROLLER_LOG ? 'inherit' : 'ignore'] });
  controllers.push(c);
  return c;
}

async function stopControllerProcess(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** Creates a Tenant of this run and waits for the controller to render its namespace. */
async function reconciledTenant(name: string, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  tenants.push(name);
  await create(tenant(name));
  await waitFor(() => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `tenant-${name.replace(/\./g, '-')}` } }), { timeoutMs, message: `the namespace of Tenant ${name}` });
  return Date.now() - t0;
}

/** Watches a process's memory every 250 ms until stopped; returns the highest VmRSS seen. */
function sampleMemory(c: ChildProcess): () => number {
  let max = 0;
  const timer = setInterval(() => {
    if (c.pid && c.exitCode === null) max = Math.max(max, memoryOf(c.pid).rss);
  }, 250);
  return () => {
    clearInterval(timer);
    return max;
  };
}

/**
 * Deletes the flood with its namespace: the namespace controller removes the Secrets server-side.
 * A DELETE of the collection would answer with every deleted Secret, over 1 GB: more than a
 * string the client can hold.
 */
async function deleteFlood(): Promise<void> {
  if (!floodNs) return;
  await rest().request('DELETE', `/api/v1/namespaces/${floodNs}`).catch(() => undefined);
}

/** etcd's quota and the part of its database in use, when the test cluster's etcd can be asked. */
async function etcdSpace(): Promise<{ quota: number; inUse: number } | undefined> {
  const dir = testClusterDir();
  const urlFile = dir && join(dir, 'etcd-url');
  if (!urlFile || !existsSync(urlFile)) return undefined;
  const text = await (await fetch(`${readFileSync(urlFile, 'utf8').trim()}/metrics`)).text();
  const metric = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
  return { quota: metric('etcd_server_quota_backend_bytes'), inUse: metric('etcd_mvcc_db_total_size_in_use_in_bytes') };
}

beforeAll(async () => {
  // Never the flood that fills the shared etcd (every test's writes would then fail).
  const space = await etcdSpace();
  if (space) expect(space.inUse + SECRETS * SECRET_BYTES * 1.1, `etcd holds ${Math.round(space.inUse / 2 ** 20)} MiB of its ${Math.round(space.quota / 2 ** 20)} MiB quota`).toBeLessThan(space.quota * 0.9);
  // The CLI bundle made now, not by the first controller process (esbuild's memory is not the controller's).
  await bundledEntry(CLI_ENTRY);
  await create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: mydriveNs } });
  floodNs = await createNamespace('mem-flood');
}, 60_000);

afterAll(async () => {
  await deleteFlood();
  // Tenants carry the controller's finalizer: removed here, so cleanup never waits for a controller.
  for (const name of tenants) {
    const ref = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name } };
    await patch(ref, { metadata: { finalizers: null } }).catch(() => undefined);
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/tenants/${name}`).catch(() => undefined);
  }
  for (const c of controllers) await stopControllerProcess(c);
  for (const name of tenants) for (const ns of [`tenant-${name.replace(/\./g, '-')}`, `sandbox-${name.replace(/\./g, '-')}`]) await deleteNamespaceWithPvcs(ns);
  await deleteNamespaceWithPvcs(mydriveNs);
  if (floodNs) await deleteNamespaceWithPvcs(floodNs);
}, 480_000);

describe('the controller process with 1 GiB of objects carrying our label', () => {
  it('keeps its peak RSS far below its memory limit while they are created, after a restart that lists them, and keeps reconciling', async () => {
    const t0 = Date.now();
    const first = startControllerProcess();
    await reconciledTenant(`${shard}.alice`, 120_000);
    const before = memoryOf(first.pid!);

    // 1. Created while the controller watches: each one enters its Secret cache.
    const stopSampling = sampleMemory(first);
    const payload = randomBytes(SECRET_BYTES).toString('base64');
    let next = 0;
    const c = rest();
    const worker = async () => {
      while (next < SECRETS) {
        const i = next++;
        await c.request('POST', `/api/v1/namespaces/${floodNs}/secrets`, {
          body: {
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: {
              name: `flood-${i}`,
              labels: { [COMPOSER.managedByKey]: COMPOSER.managedByValue, [COMPOSER.parentIdLabel]: 'ffffffffffffffffffff' },
              // A parent in the Secret's own namespace: the child guard keeps it (the worst case).
              annotations: { [COMPOSER.parentAnnotation]: `Instance/${floodNs}/ghost-${i}` },
            },
            type: 'Opaque',
            data: { blob: payload },
          },
        });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const createdMs = Date.now() - t0;
    // Still reconciling with them all in its cache (a Tenant created after them is rendered).
    const aliveMs = await reconciledTenant(`${shard}.bob`, 120_000);
    const watched = { peak: Math.max(stopSampling(), memoryOf(first.pid!).hwm), ...memoryOf(first.pid!) };
    const firstRan = first.exitCode === null && first.signalCode === null;
    await stopControllerProcess(first);

    // 2. A restart lists all of them (in pages) before it reconciles anything.
    const second = startControllerProcess();
    const stopSecond = sampleMemory(second);
    const restartMs = await reconciledTenant(`${shard}.carol`, 180_000);
    const listed = { peak: Math.max(stopSecond(), memoryOf(second.pid!).hwm), ...memoryOf(second.pid!) };
    await deleteFlood();
    const totalMs = Date.now() - t0;

    const summary = { secrets: SECRETS, bytes: SECRETS * SECRET_BYTES, before, watched, listed, createdMs, aliveMs, restartMs, totalMs };
    process.stdout.write(`controller memory bound: ${JSON.stringify(summary)}\n`);
    expect(firstRan, 'the first controller ran until stopped').toBe(true);
    expect(watched.peak, 'peak RSS of the controller watching the Secrets being created (MiB)').toBeLessThan(RSS_BOUND_MB);
    expect(listed.peak, 'peak RSS of the controller that listed them at start (MiB)').toBeLessThan(RSS_BOUND_MB);
    expect(second.exitCode).toBeNull();
  }, 900_000);
});
