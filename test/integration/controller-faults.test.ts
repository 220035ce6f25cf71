// The apply-controller under faults, on the real test cluster (issue #6, "Faults"): the API server
// killed and restarted in the middle of a burst, watch expiry (410 Gone), 409 conflicts, 429
// throttling, and leader election with two replicas where the leader dies without releasing.
// 429s and the 409 race come from a proxy in front of the real API server (api-proxy.ts).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ComposerConfig } from '../../src/config/config.ts';
import { TENANT_FINALIZER } from '../../src/controller/context.ts';
import { liveHoldsRendered } from '../../src/controller/live-compare.ts';
import { COMPOSER } from '../../src/model/labels.ts';
import { delayFirstAnswer, startApiProxy, type ApiProxy } from './api-proxy.ts';
import { adminKubeConfigPath, ApiError, getObject, listObjects, REPO_ROOT, rest, TEST_CLUSTER_SCRIPT, testClusterDir, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, expectedObjects, FLAVOURS, lab, labConfig, liveOf, patch, runController, SELECTOR, shardName, withTenantQuota, type Lab, type RunningController } from './controller-support.ts';

const execFileAsync = promisify(execFile);
const labs: Lab[] = [];
const running: RunningController[] = [];
const proxies: ApiProxy[] = [];

afterEach(async () => {
  for (const c of running.splice(0)) await c.handle.stop();
  for (const p of proxies.splice(0)) await p.close();
});
afterAll(async () => {
  for (const l of labs) await cleanupLab(l);
});

/** A request that survives an API server outage: retried on connection errors, 5xx and 429. */
async function persistently<T>(fn: () => Promise<T>, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      const transient = !(e instanceof ApiError) || e.code >= 500 || e.code === 429;
      if (!transient || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function instance(l: Lab, name: string, flavour: (typeof FLAVOURS)[number], tenant = l.tenants[0]): KubeObject {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Instance',
    metadata: { name, namespace: l.tenantNs },
    spec: { running: true, 'template.crownlabs.polito.it/TemplateRef': { name: flavour.name, namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: tenant } },
  };
}

const instanceRef = (l: Lab, name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });

/** Creates the lab's Workspace, Tenants and Templates (the controller makes the namespaces). */
async function setUpLab(prefix: string, start: (config: ComposerConfig) => Promise<RunningController>): Promise<{ l: Lab; config: ComposerConfig; ctl: RunningController }> {
  // Room for the bursts below (the quota is enforced).
  const l = withTenantQuota(lab(shardName(prefix)), { cpu: 100, memory: '200Gi', instances: 60 });
  labs.push(l);
  const config = labConfig(l.shard);
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  const ctl = await start(config);
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 60_000,
    message: 'tenant and workspace namespaces',
  });
  for (const o of l.inputs.namespaced.filter((o) => o.kind === 'Template')) await create(o);
  return { l, config, ctl };
}

/** A proxy in front of the API server, and a lab whose controller talks through it. */
async function setUpLabBehindProxy(prefix: string) {
  const proxy = await startApiProxy();
  proxies.push(proxy);
  const set = await setUpLab(prefix, async (c) => {
    const r = await runController(c, { kubeConfig: proxy.kubeConfig });
    running.push(r);
    return r;
  });
  return { proxy, ...set };
}

/**
 * Converged: every Instance has a phase, every object compose renders is live with the rendered
 * values and owner, and no other object of ours exists in the tenant namespace (no duplicates).
 */
async function problems(l: Lab, config: ComposerConfig): Promise<string[]> {
  const out: string[] = [];
  const instances = await listObjects<any>('crownlabs.polito.it/v1alpha2', 'Instance', { namespace: l.tenantNs });
  for (const i of instances) if (i.status?.phase === undefined) out.push(`Instance ${i.metadata.name}: no status`);
  const expected = await expectedObjects(l, config);
  for (const o of expected) {
    const live = await liveOf(o);
    if (!liveHoldsRendered(o as never, live)) out.push(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}: ${live ? 'differs' : 'missing'}`);
  }
  const inNs = expected.filter((o) => o.metadata.namespace === l.tenantNs);
  const wanted = new Set(inNs.map((o) => `${o.kind}/${o.metadata.name}`));
  for (const [apiVersion, kind] of [...new Set(inNs.map((o) => `${o.apiVersion}|${o.kind}`))].map((k) => k.split('|'))) {
    const live = await listObjects<KubeObject>(apiVersion, kind, { namespace: l.tenantNs, labelSelector: `${COMPOSER.managedByKey}=${COMPOSER.managedByValue}` });
    for (const o of live) if (!wanted.has(`${kind}/${o.metadata.name}`) && !o.metadata.deletionTimestamp) out.push(`${kind}/${o.metadata.name}: not rendered (duplicate or leftover)`);
  }
  return out;
}

async function converge(l: Lab, config: ComposerConfig, ctl: RunningController, timeoutMs = 120_000): Promise<void> {
  let last: string[] = [];
  await waitFor(
    async () => {
      last = await problems(l, config);
      return last.length === 0;
    },
    { timeoutMs, intervalMs: 1000, message: 'convergence' },
  ).catch((e) => {
    throw new Error(`${(e as Error).message}; still: ${last.slice(0, 10).join('; ')}`);
  });
  await ctl.handle.idle();
}

async function restartApiServer(downSeconds: number): Promise<void> {
  const dir = testClusterDir();
  if (!dir) throw new Error('restarting the API server needs the test cluster state dir (TEST_CLUSTER_DIR)');
  await execFileAsync(TEST_CLUSTER_SCRIPT, ['restart-apiserver', '--down', String(downSeconds)], { env: { ...process.env, TEST_CLUSTER_DIR: dir }, timeout: 150_000 });
}

const relists = async (ctl: RunningController, reason: string, kind?: string) =>
  (await ctl.handle.metrics.relists.get()).values.filter((v) => v.labels.reason === reason && (!kind || v.labels.kind === kind)).reduce((a, v) => a + v.value, 0);

describe('faults: API server outage', () => {
  it('the API server killed and restarted in the middle of a burst: converges, nothing lost or duplicated', async () => {
    const { l, config, ctl } = await setUpLab('cfk', async (c) => {
      const r = await runController(c, { maxConcurrentReconciles: 4 });
      running.push(r);
      return r;
    });
    const burst = Array.from({ length: 30 }, (_, i) => instance(l, `b${i}`, FLAVOURS[i % FLAVOURS.length]));
    let created = 0;
    let restart: Promise<void> | undefined;
    const queue = [...burst];
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        for (let o = queue.shift(); o; o = queue.shift()) {
          // A create whose answer was lost in the crash is retried and finds the object: 409 is fine.
          await persistently(() => createIgnoringConflict(o));
          if (++created === 10) restart = restartApiServer(3);
        }
      }),
    );
    await restart;
    expect(created).toBe(burst.length);
    await converge(l, config, ctl, Number(process.env.FAULTS_CONVERGE_MS ?? 300_000));
    // The informers came back (re-listed after errors or 410), and still watch: a later edit lands.
    expect((await relists(ctl, 'gone')) + (await relists(ctl, 'error'))).toBeGreaterThan(0);
    // b4 is a persistent container (FLAVOURS[4]): stopped, it scales to 0 in either stoppedEphemeral mode.
    expect(FLAVOURS[4]).toMatchObject({ environmentType: 'Container', persistent: true });
    await patch(burst[4], { spec: { running: false } });
    await waitFor(async () => (await getObject<any>({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'b4', namespace: l.tenantNs } }))?.spec?.replicas === 0, {
      timeoutMs: 30_000,
      message: 'the stopped persistent container instance scaled to 0 after the restart',
    });
    console.log(`outage: relists gone=${await relists(ctl, 'gone')} error=${await relists(ctl, 'error')}, ${ctl.reconciled.length} reconciles, ${ctl.writes().length} writes`);
  }, 480_000);
});

describe('faults: watch expiry', () => {
  it('a watch whose resourceVersion expired while disconnected gets a real 410 from the API server, re-lists, and misses nothing', async () => {
    const { proxy, l, config, ctl } = await setUpLabBehindProxy('cfw');
    const a = instance(l, 'keep', FLAVOURS[5]);
    const b = instance(l, 'gone', FLAVOURS[5]);
    await create(a);
    await create(b);
    await converge(l, config, ctl);
    // Disconnect the controller from every watch while the API server restarts: its watch cache
    // starts over, so the resourceVersions the informers hold are too old when they resume.
    const gone0 = await relists(ctl, 'gone', 'Instance');
    let refuse = true;
    proxy.rule = (r) => (refuse && r.watch ? { hold: () => waitFor(() => !refuse, { timeoutMs: 120_000 }).then(() => undefined) } : undefined);
    proxy.dropStreams();
    await restartApiServer(0);
    await rest().request('DELETE', `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/gone`);
    const c = instance(l, 'new', FLAVOURS[5]);
    await create(c);
    refuse = false;
    await waitFor(async () => (await relists(ctl, 'gone', 'Instance')) > gone0, { timeoutMs: 60_000, message: 'Instances re-listed after 410' });
    expect(proxy.log.some((r) => r.watch && r.path.endsWith('/instances') && (r.status === 410 || r.watchErrorCode === 410))).toBe(true);
    // The Instance deleted and the one created while the watch was down are both seen.
    await waitFor(() => ctl.handle.caches.instances.get(l.tenantNs, 'new') && !ctl.handle.caches.instances.get(l.tenantNs, 'gone'), { message: 'cache after re-list' });
    await converge(l, config, ctl);
    expect(await getObject({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gone', namespace: l.tenantNs } })).toBeUndefined();
  });
});

describe('faults: conflicts', () => {
  it('a write racing a concurrent update gets a real 409, the reconcile retries from fresh state and keeps both changes', async () => {
    const proxy = await startApiProxy();
    proxies.push(proxy);
    const l = lab(shardName('cfc'));
    labs.push(l);
    const config = labConfig(l.shard);
    const tenant = l.inputs.cluster.find((o) => o.kind === 'Tenant' && o.metadata.name === l.tenants[1])!;
    const tenantPath = `/apis/crownlabs.polito.it/v1alpha2/tenants/${l.tenants[1]}`;
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    // Hold the controller's first write to the Tenant (adding the finalizer, with the
    // resourceVersion it read) until someone else has updated the Tenant.
    let raced = false;
    proxy.rule = (r) => {
      if (raced || r.method !== 'PATCH' || r.path !== tenantPath) return undefined;
      raced = true;
      return { hold: () => patch(tenant, { spec: { firstName: 'Robert' } }).then(() => undefined) };
    };
    const ctl = await runController(config, { kubeConfig: proxy.kubeConfig });
    running.push(ctl);
    await create(tenant);
    await waitFor(() => proxy.log.some((r) => r.path === tenantPath && r.method === 'PATCH' && r.status === 409), { timeoutMs: 60_000, message: 'a 409 from the API server' });
    const t = await waitFor(
      async () => {
        const t = await getObject<any>({ apiVersion: tenant.apiVersion, kind: 'Tenant', metadata: { name: l.tenants[1] } });
        return t?.metadata.finalizers?.includes(TENANT_FINALIZER) && t.metadata.labels?.['crownlabs.polito.it/first-name'] === 'Robert' && t.status?.ready === true ? t : undefined;
      },
      { timeoutMs: 30_000, message: 'finalizer, labels and status after the conflict' },
    );
    expect(t.spec.firstName).toBe('Robert');
    expect((await ctl.handle.metrics.errors.get()).values.reduce((a, v) => a + v.value, 0)).toBeGreaterThan(0);
  });
});

describe('faults: an answer read late', () => {
  it("someone else's change that comes before our metadata patch's answer is composed from, not written over", async () => {
    const { proxy, l, config, ctl } = await setUpLabBehindProxy('cfl');
    const inst = instance(l, 'late', FLAVOURS[3]);
    const instancePath = `/apis/crownlabs.polito.it/v1alpha2/namespaces/${l.tenantNs}/instances/late`;
    // The controller's first metadata patch of the Instance reaches the server at once, but its
    // answer is handed over only after the Instance is stopped by someone else and the watch has
    // had time to bring both changes (the echo, then the stop) to the controller.
    const delayed = delayFirstAnswer(proxy, 'PATCH', instancePath, async () => {
      await patch(inst, { spec: { running: false } });
      await new Promise((res) => setTimeout(res, 1500));
    });
    await create(inst);
    await waitFor(delayed, { timeoutMs: 60_000, message: 'the metadata patch' });
    // Converged on what the cluster holds: stopped (a Deployment of 0 replicas), not the running copy the reconcile began with.
    await converge(l, config, ctl, 60_000);
    const live = await getObject<any>(instanceRef(l, 'late'));
    expect(live.spec.running).toBe(false);
    expect(live.metadata.labels).toBeDefined();
  }, 200_000);
});

describe('faults: throttling', () => {
  it('429 with Retry-After: the controller waits at least as long before retrying, and converges', async () => {
    const proxy = await startApiProxy();
    proxies.push(proxy);
    // The first request to every path, and then every 4th request, is answered 429 Retry-After: 1.
    const seen = new Set<string>();
    let n = 0;
    proxy.rule = (r) => {
      const key = `${r.method} ${r.path} ${r.watch}`;
      const first = !seen.has(key);
      seen.add(key);
      return first || ++n % 4 === 0 ? { throttle: { retryAfterSeconds: 1 } } : undefined;
    };
    const { l, config, ctl } = await setUpLab('cft', async (c) => {
      const r = await runController(c, { kubeConfig: proxy.kubeConfig, maxConcurrentReconciles: 4 });
      running.push(r);
      return r;
    });
    for (let i = 0; i < 12; i++) await create(instance(l, `t${i}`, FLAVOURS[i % FLAVOURS.length]));
    await converge(l, config, ctl, 300_000);
    const throttled = proxy.log.filter((r) => r.status === 429);
    expect(throttled.length).toBeGreaterThan(20);
    expect(throttled.some((r) => r.method === 'PATCH')).toBe(true);
    expect(throttled.some((r) => r.watch)).toBe(true);
    // Every retry of a throttled request came no sooner than its Retry-After (Events excepted:
    // many reconciles post to the same collection path).
    const early: string[] = [];
    for (const t of throttled.filter((r) => !r.path.endsWith('/events'))) {
      const next = proxy.log.find((r) => r.at > t.at && sameRequest(r, t));
      if (next && next.at - t.at < 990) early.push(`${t.method} ${t.path} retried after ${next.at - t.at} ms`);
    }
    expect(early).toEqual([]);
    expect((await ctl.handle.metrics.throttled.get()).values[0].value).toBeGreaterThan(0);
  }, 400_000);
});

describe('faults: leader election', () => {
  it('two replicas: one active, the other sends no writes; the leader killed without releasing → the other takes over within the lease duration', async () => {
    const l = lab(shardName('cfl'));
    labs.push(l);
    const config = labConfig(l.shard);
    const leaseName = `${l.shard}-lease`;
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    for (const o of l.inputs.cluster) await create(o);
    // Replica 1: the real CLI in its own process, so that it can die by SIGKILL.
    const [mp, hp] = [await freePort(), await freePort()];
    const leader: ChildProcess = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'bin/crownlabs.js'), 'controller', '--kubeconfig', adminKubeConfigPath(), '--enable-leader-election', '--leader-election-id', leaseName, '--leader-election-namespace', 'default', '--metrics-addr', `127.0.0.1:${mp}`, '--no-metrics-secure', '--health-probe-addr', `127.0.0.1:${hp}`, '--target-label', `${SELECTOR}=${l.shard}`, '--namespace-whitelist', `${SELECTOR}=${l.shard}`, '--mydrive-pvcs-namespace', config.mydrivePvcsNamespace, '--website-base-url', 'crownlabs.test'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    leader.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    leader.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      const lease = () => rest().request('GET', `/apis/coordination.k8s.io/v1/namespaces/default/leases/${leaseName}`);
      const leaderIdentity: string = await waitFor(async () => (await lease().catch(() => undefined))?.spec?.holderIdentity, { timeoutMs: 180_000, message: `lease held (output: ${out})` });
      await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })), {
        timeoutMs: 60_000,
        message: 'tenant and workspace namespaces from the leader',
      });
      // Replica 2, in-process: waits for the Lease.
      let standby: RunningController | undefined;
      const requests: { method: string; path: string }[] = [];
      const standbyStarted = runController(config, { enableLeaderElection: true, leaderElectionId: leaseName, leaderElectionNamespace: 'default', onRequest: (r) => requests.push(r) }).then((r) => {
        running.push(r);
        standby = r;
        return r;
      });
      // The leader does the work while the standby waits.
      for (const o of l.inputs.namespaced.filter((o) => o.kind === 'Template')) await create(o);
      await create(instance(l, 'led', FLAVOURS[3]));
      await waitFor(async () => (await getObject<any>(instanceRef(l, 'led')))?.status?.phase !== undefined, { timeoutMs: 60_000, message: 'the leader reconciles' });
      await new Promise((r) => setTimeout(r, 3000));
      expect(standby).toBeUndefined();
      // A standby reads the Lease and the CRDs only: it knows the API level because every replica
      // serves the webhooks at that level (docs/behaviour.md §16.2).
      const notLease = requests.filter((r) => !r.path.includes('/leases/') && !r.path.startsWith('/apis/apiextensions.k8s.io/v1/customresourcedefinitions'));
      expect(notLease).toEqual([]);
      expect(requests.filter((r) => r.method !== 'GET')).toEqual([]);
      // The leader dies without releasing the Lease.
      const renewed = Date.parse((await lease()).spec.renewTime);
      const duration = (await lease()).spec.leaseDurationSeconds as number;
      leader.kill('SIGKILL');
      const killedAt = Date.now();
      await waitFor(async () => (await lease()).spec.holderIdentity !== leaderIdentity, { timeoutMs: 60_000, intervalMs: 100, message: 'the standby takes the Lease' });
      const tookOver = Date.now();
      await standbyStarted;
      // Not before the lease ran out (it was not released), and within one lease duration of the
      // last renewal plus one retry period.
      expect(tookOver).toBeGreaterThanOrEqual(renewed + duration * 1000 - 1000);
      expect(tookOver - killedAt).toBeLessThanOrEqual(duration * 1000 + 2000 + 3000);
      // The new leader works.
      await create(instance(l, 'after', FLAVOURS[5]));
      await waitFor(async () => (await getObject<any>(instanceRef(l, 'after')))?.status?.phase !== undefined, { timeoutMs: 60_000, message: 'the new leader reconciles' });
      expect(requests.filter((r) => r.method !== 'GET' && !r.path.includes('/leases/')).length).toBeGreaterThan(0);
      console.log(`fail-over ${tookOver - killedAt} ms after SIGKILL (lease ${duration}s)`);
    } finally {
      if (leader.exitCode === null) leader.kill('SIGKILL');
    }
  }, 480_000);
});

/** The same request again: method, path, watch or not, and selectors (two informers may list one path). */
function sameRequest(a: { method: string; path: string; watch: boolean; query: string }, b: typeof a): boolean {
  const sel = (q: string) => {
    const p = new URLSearchParams(q);
    return `${p.get('labelSelector')}|${p.get('fieldSelector')}`;
  };
  return a.method === b.method && a.path === b.path && a.watch === b.watch && sel(a.query) === sel(b.query);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
