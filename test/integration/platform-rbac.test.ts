// Issue 8: the controller runs as the ServiceAccount of the rendered install, with the ClusterRole
// derived by src/platform/derive-rbac.ts, on the real API server (RBAC and
// OwnerReferencesPermissionEnforcement on). It converges over the example lab and a generated lab
// with no 403; and the role is minimal: without any single one of its rules, a short scenario sees
// a 403 (or does not converge). The bastion's and the image-list updater's roles are checked the
// same way with their own code.
import https from 'node:https';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInputs } from '../../src/inputs/parse.ts';
import { runBastionKeys } from '../../src/bastion/tenant-watch.ts';
import { loadConfig, type ComposerConfig } from '../../src/config/config.ts';
import { startController, type ControllerHandle } from '../../src/controller/controller.ts';
import { KubeImageListWriter } from '../../src/integrations/registry/updater.ts';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { deriveBastionRules, deriveControllerRbac, deriveImageListRules, type PolicyRule } from '../../src/platform/derive-rbac.ts';
import { renderPlatform } from '../../src/platform/install.ts';
import { generateLab } from '../support/generate-lab.ts';
import { deleteInstall, deleteObject, getObject, kubeConfigFor, listObjects, REPO_ROOT, rest, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, deleteNamespaceWithPvcs, lab, labConfig, patch, releasePvcs, shardName, type Lab } from './controller-support.ts';

const NS = 'crownlabs-composer';
const SA = 'crownlabs-controller';
const LEASE = 'crownlabs-composer-rbac-test';
const RBAC = 'rbac.authorization.k8s.io/v1';

let controllerKc: KubeConfig;
let install: KubeObject[] = [];

/** Replaces the rules of the controller's ClusterRole and Role (the rules list is atomic: SSA replaces it). */
async function setRules(clusterRules: PolicyRule[], leaseRules: PolicyRule[]): Promise<void> {
  await serverSideApply([
    { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name: SA }, rules: clusterRules },
    { apiVersion: RBAC, kind: 'Role', metadata: { name: `${SA}-leader-election`, namespace: NS }, rules: leaseRules },
  ]);
  // The RBAC authorizer reads roles from an informer: give it a moment.
  await new Promise((r) => setTimeout(r, 400));
}

interface Run {
  forbidden: string[];
  /** Resolves once informers synced and the lease is held (never, when a rule is missing). */
  started: Promise<ControllerHandle>;
}

/** Starts the controller as the ServiceAccount, recording every 403 the API server answers. */
function runAsServiceAccount(config: ComposerConfig, opts: { secureMetrics?: boolean } = {}): Run {
  const forbidden: string[] = [];
  const started = startController({
    kubeConfig: controllerKc,
    config,
    // As the install runs it (--metrics-secure): its reviews are the controller's own requests.
    metricsAddr: opts.secureMetrics ? '127.0.0.1:0' : '',
    metricsSecure: opts.secureMetrics ? {} : undefined,
    healthProbeAddr: '',
    maxConcurrentReconciles: 4,
    enableLeaderElection: true,
    leaderElectionNamespace: NS,
    leaderElectionId: LEASE,
    logger: pino({ level: process.env.CONTROLLER_LOG ?? 'silent' }),
    onResponse: (r) => {
      if (r.code === 403) forbidden.push(`${r.method} ${r.path}`);
    },
  });
  return { forbidden, started };
}

const instanceReconciled = async (o: KubeObject) => {
  const live = await getObject<any>(o);
  return Boolean(live?.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION] || live?.status?.phase);
};

/** Inputs are in, every Instance reconciled, every Tenant has a status, and the queue is quiet. */
async function converged(inputs: KubeObject[], handle?: ControllerHandle): Promise<boolean> {
  for (const o of inputs) {
    if (o.kind === 'Instance' && !(await instanceReconciled(o))) return false;
    if ((o.kind === 'Tenant' || o.kind === 'Workspace') && (await getObject<any>(o))?.status?.ready === undefined) return false;
  }
  if (handle) await handle.idle(200);
  return true;
}

beforeAll(async () => {
  // The install, as `crownlabs manifests` renders it (CRDs are installed by the global setup).
  const { config } = loadConfig({ file: path.join(REPO_ROOT, 'examples/crownlabs.config.yaml') });
  install = renderPlatform({ ...config, platformInstallCrds: false, platformNamespace: NS }) as KubeObject[];
  await serverSideApply(install);
  controllerKc = await kubeConfigFor(`system:serviceaccount:${NS}:${SA}`, ['system:serviceaccounts', `system:serviceaccounts:${NS}`]);
}, 60_000);

// Other files render the same cluster-scoped names (the bastion's ClusterRole, for one): leave none behind.
afterAll(() => deleteInstall(install), 60_000);

describe('the rendered install', () => {
  it('binds the derived ClusterRole and the lease Role to the controller ServiceAccount', async () => {
    const crb = await getObject<any>({ apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: SA } });
    expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: SA, namespace: NS }]);
    const rb = await getObject<any>({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: `${SA}-leader-election`, namespace: NS } });
    expect(rb.roleRef.name).toBe(`${SA}-leader-election`);
    expect(await getObject({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA, namespace: NS } })).toBeDefined();
  });
});

describe('the controller as its ServiceAccount, with the derived role', () => {
  const { config } = loadConfig({ file: path.join(REPO_ROOT, 'examples/crownlabs.config.yaml') });
  const example = readInputs([path.join(REPO_ROOT, 'examples/lab')]).objects.map((o) => structuredClone(o.object) as unknown as KubeObject);
  const generated = generateLab({ workspaces: 2, tenants: 8, instances: 21 }) as unknown as KubeObject[];
  const inputs = [...example, ...generated];
  let run: Run;
  let handle: ControllerHandle;

  beforeAll(async () => {
    const rbac = deriveControllerRbac(config, [LEASE]);
    await setRules(rbac.clusterRules, rbac.leaseRules);
    await deleteObject({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE, namespace: NS } });
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    run = runAsServiceAccount(config);
    handle = await run.started;
    for (const o of inputs.filter((x) => x.kind === 'Workspace' || x.kind === 'Tenant')) {
      if (o.kind === 'Tenant') (o.spec as Record<string, unknown>).lastLogin = new Date().toISOString();
      await create(o);
    }
    const namespaces = [...new Set(inputs.filter((o) => o.kind === 'Template' || o.kind === 'Instance').map((o) => o.metadata.namespace!))];
    await waitFor(async () => (await Promise.all(namespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } })))).every(Boolean), { timeoutMs: 60_000, message: 'lab namespaces' });
    for (const o of inputs.filter((x) => x.kind === 'Template')) await create(o);
    for (const o of inputs.filter((x) => x.kind === 'Instance')) {
      const { uid: _uid, ...metadata } = o.metadata as Record<string, unknown>;
      await create({ ...o, metadata } as KubeObject);
    }
    await waitFor(() => converged(inputs), { timeoutMs: 120_000, intervalMs: 500, message: 'example and generated labs converged' });
    await handle.idle();
  }, 240_000);

  afterAll(async () => {
    await handle?.stop();
    // Leave no lab behind: other files create the example lab under the same names.
    for (const o of inputs.filter((x) => x.kind === 'Tenant' || x.kind === 'Workspace')) {
      await patch(o, { metadata: { finalizers: null } }).catch(() => undefined);
      await deleteObject(o);
    }
    const namespaces = new Set(inputs.filter((o) => o.metadata.namespace).map((o) => o.metadata.namespace!));
    for (const t of inputs.filter((o) => o.kind === 'Tenant')) namespaces.add(`sandbox-${t.metadata.name.replace(/\./g, '-')}`);
    for (const n of namespaces) await deleteNamespaceWithPvcs(n);
    await releasePvcs(config.mydrivePvcsNamespace);
  }, 120_000);

  it(`converges over the example lab and a generated lab (${generated.filter((o) => o.kind === 'Instance').length} more Instances) with no 403`, async () => {
    expect(run.forbidden).toEqual([]);
  });

  it('prunes what a stopped Instance no longer renders, still with no 403', async () => {
    const inst = example.find((o) => o.kind === 'Instance' && (o.spec as { running?: boolean }).running !== false)!;
    const services = async () => (await listObjects<KubeObject>('v1', 'Service', { namespace: inst.metadata.namespace })).filter((s) => s.metadata.name.startsWith(inst.metadata.name));
    expect((await services()).length).toBeGreaterThan(0);
    await patch(inst, { spec: { running: false } });
    await waitFor(async () => (await services()).length === 0, { timeoutMs: 30_000, message: 'Service of the stopped Instance pruned' });
    await handle.idle();
    expect(run.forbidden).toEqual([]);
  });
});

describe('the derived controller role is minimal', () => {
  // Per-instance auth: the scenario then renders every kind the derivation covers for it.
  const config = labConfig('rbacmin', { authMode: 'per-instance' });
  const rbac = deriveControllerRbac(config, [LEASE]);
  const labs: Lab[] = [];
  // A scraper bound to the rendered metrics-reader ClusterRole, as Prometheus is (docs/deploy.md).
  const SCRAPER = 'rbac-test-metrics-scraper';
  let scraperToken = '';
  beforeAll(async () => {
    await serverSideApply([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SCRAPER, namespace: NS } },
      { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: SCRAPER }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${SA}-metrics-reader` }, subjects: [{ kind: 'ServiceAccount', name: SCRAPER, namespace: NS }] },
    ] as KubeObject[]);
    const tr = await rest().request('POST', `/api/v1/namespaces/${NS}/serviceaccounts/${SCRAPER}/token`, { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } } });
    scraperToken = tr.status.token;
  });
  afterAll(async () => {
    await deleteObject({ apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name: SCRAPER } });
    await deleteObject({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SCRAPER, namespace: NS } });
  });
  /** The status of one scrape of the controller's /metrics with the scraper's token. */
  const scrape = (address: string) =>
    new Promise<number>((resolve) => {
      const i = address.lastIndexOf(':');
      https
        .get({ host: address.slice(0, i), port: Number(address.slice(i + 1)), path: '/metrics', rejectUnauthorized: false, agent: false, headers: { Authorization: `Bearer ${scraperToken}` } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', () => resolve(0));
    });

  /**
   * One short scenario on a fresh shard (nothing of it exists yet): the lab of
   * controller-support (every environment type, a sandbox, a manager) plus an Instance of a
   * missing Template (a Warning Event) and a snapshot of a stopped persistent VM (its Job, its status), and a scrape of its
   * authenticated /metrics (its TokenReview and SubjectAccessReview). Outcome: the 403s seen, and whether it converged.
   */
  async function scenario(clusterRules: PolicyRule[], leaseRules: PolicyRule[], timeoutMs: number): Promise<{ forbidden: string[]; converged: boolean }> {
    await setRules(clusterRules, leaseRules);
    await deleteObject({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: LEASE, namespace: NS } });
    const l = lab(shardName('rb'));
    labs.push(l);
    const cfg = labConfig(l.shard, { authMode: 'per-instance', vmRegistry: 'registry.example', vmRegistrySecret: 'registry-push' });
    const orphan: KubeObject = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'orphan', namespace: l.tenantNs },
      spec: { running: true, 'template.crownlabs.polito.it/TemplateRef': { name: 'missing', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    };
    // A snapshot of a stopped persistent VM: its Job (get, create) and its status.
    const snapshotSource: KubeObject = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'snapsrc', namespace: l.tenantNs },
      spec: { running: false, 'template.crownlabs.polito.it/TemplateRef': { name: 'pvm', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    };
    const snapshot: KubeObject = {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'InstanceSnapshot',
      metadata: { name: 'snap', namespace: l.tenantNs },
      spec: { instanceRef: { name: 'snapsrc', namespace: l.tenantNs }, imageName: 'snap' },
    };
    const extra = [orphan, snapshotSource, snapshot];
    const inputs = [...l.inputs.cluster, ...l.inputs.namespaced, ...extra.slice(0, 2)];
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: cfg.mydrivePvcsNamespace } });
    const run = runAsServiceAccount(cfg, { secureMetrics: true });
    let handle: ControllerHandle | undefined;
    void run.started.then((h) => (handle = h)).catch(() => undefined);
    const deadline = Date.now() + timeoutMs;
    const until = async (cond: () => Promise<boolean>) => {
      while (Date.now() < deadline && run.forbidden.length === 0) {
        if (await cond()) return true;
        await new Promise((r) => setTimeout(r, 150));
      }
      return false;
    };
    let done = false;
    try {
      if (await until(async () => handle !== undefined)) {
        for (const o of l.inputs.cluster) await create(o);
        const nsReady = async () => Boolean((await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })));
        if (await until(nsReady)) {
          for (const o of [...l.inputs.namespaced, ...extra]) await create(o);
          const snapshotProcessing = async () => (await getObject<any>(snapshot))?.status?.phase === 'Processing';
          done = await until(
            async () => (await converged(inputs)) && (await eventsOf(orphan)).length > 0 && (await snapshotProcessing()) && (await scrape(handle!.metricsAddress!)) === 200 && (await converged(inputs, handle)),
          );
        }
      }
    } finally {
      // A controller still waiting for a list or the Lease starts once the full role is back.
      // (One that failed to start, e.g. on a forbidden Lease, has nothing left to stop.)
      if (!handle) {
        await setRules(rbac.clusterRules, rbac.leaseRules);
        handle = await run.started.catch(() => undefined);
      }
      await handle?.stop();
    }
    return { forbidden: run.forbidden, converged: done };
  }

  async function eventsOf(o: KubeObject): Promise<KubeObject[]> {
    return (await listObjects<any>('v1', 'Event', { namespace: o.metadata.namespace })).filter((e) => e.involvedObject?.name === o.metadata.name);
  }

  afterAll(async () => {
    await setRules(rbac.clusterRules, rbac.leaseRules);
    for (const l of labs) await cleanupLab(l);
  }, 120_000);

  it('with every rule the scenario converges with no 403', async () => {
    const out = await scenario(rbac.clusterRules, rbac.leaseRules, 60_000);
    expect(out.forbidden).toEqual([]);
    expect(out.converged).toBe(true);
  }, 90_000);

  it('without any single rule the scenario sees a 403 or does not converge', async () => {
    const all = [...rbac.clusterRules.map((r, i) => ({ where: 'cluster' as const, i, r })), ...rbac.leaseRules.map((r, i) => ({ where: 'lease' as const, i, r }))];
    const unneeded: string[] = [];
    const seen: string[] = [];
    for (const { where, i, r } of all) {
      const clusterRules = where === 'cluster' ? rbac.clusterRules.filter((_, j) => j !== i) : rbac.clusterRules;
      const leaseRules = where === 'lease' ? rbac.leaseRules.filter((_, j) => j !== i) : rbac.leaseRules;
      const out = await scenario(clusterRules, leaseRules, 20_000);
      const rule = `${r.apiGroups[0] || 'core'}/${r.resources[0]}${r.resourceNames ? `[${r.resourceNames.join()}]` : ''}: ${r.verbs.join(',')}`;
      if (out.forbidden.length === 0 && out.converged) unneeded.push(rule);
      else seen.push(`${rule} → ${out.forbidden[0] ?? 'no convergence'}`);
    }
    console.log(`minimality: ${all.length} rules, each one needed:\n  ${seen.join('\n  ')}`);
    expect(unneeded).toEqual([]);
  }, 1_200_000);
});

describe('the bastion and image-list roles are minimal', () => {
  /** A ServiceAccount bound to a ClusterRole with these rules; returns its kubeconfig. */
  async function serviceAccountWith(name: string, rules: PolicyRule[]): Promise<KubeConfig> {
    await serverSideApply([
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: NS } },
      { apiVersion: RBAC, kind: 'ClusterRole', metadata: { name }, rules },
      { apiVersion: RBAC, kind: 'ClusterRoleBinding', metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'ServiceAccount', name, namespace: NS }] },
    ]);
    await new Promise((r) => setTimeout(r, 400));
    return kubeConfigFor(`system:serviceaccount:${NS}:${name}`, ['system:serviceaccounts', `system:serviceaccounts:${NS}`]);
  }

  /** The keys sidecar as the ServiceAccount: did it write the keys of a Tenant created after it started? */
  async function bastionWorks(kc: KubeConfig): Promise<boolean> {
    const { mkdtemp, readFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'bastion-rbac-')), 'authorized_keys');
    const abort = new AbortController();
    const lines: string[] = [];
    const running = runBastionKeys({ kubeConfig: kc, path: file, log: (l) => lines.push(l), retryMs: 200, signal: abort.signal });
    const name = shardName('bk');
    try {
      // The Tenant comes after the first list: only the watch can deliver it.
      await waitFor(() => lines.some((l) => l.includes('full sync')), { timeoutMs: 3_000 }).catch(() => undefined);
      await create({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name }, spec: { firstName: 'K', lastName: 'Eys', email: 'k@example.org', publicKeys: [`ssh-ed25519 AAAA${name} k@x`] } });
      return await waitFor(async () => (await readFile(file, 'utf8').catch(() => '')).includes(`AAAA${name}`), { timeoutMs: 6_000 }).then(
        () => true,
        () => false,
      );
    } finally {
      abort.abort();
      await Promise.race([running, new Promise((r) => setTimeout(r, 2000))]);
      await deleteObject({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name } });
    }
  }

  it('bastion-keys works with the derived rules and fails without any one verb', async () => {
    const rules = deriveBastionRules();
    expect(await bastionWorks(await serviceAccountWith('rbac-bastion', rules))).toBe(true);
    for (const verb of rules[0].verbs) {
      const fewer = [{ ...rules[0], verbs: rules[0].verbs.filter((v) => v !== verb) }];
      expect(await bastionWorks(await serviceAccountWith('rbac-bastion', fewer)), `without ${verb}`).toBe(false);
    }
  }, 90_000);

  it('the image-list updater creates and then updates its ImageList with the derived rules, and cannot without either', async () => {
    const name = shardName('il');
    const rules = deriveImageListRules(name);
    const list = (images: string[]) => ({
      apiVersion: 'crownlabs.polito.it/v1alpha1',
      kind: 'ImageList',
      metadata: { name },
      spec: { registryName: 'registry.test', images: images.map((i) => ({ name: i, versions: ['1'] })) },
    });
    const write = async (rs: PolicyRule[], images: string[]) =>
      new KubeImageListWriter(await serviceAccountWith('rbac-imagelist', rs)).apply(list(images) as never).then(
        () => true,
        (e) => (String(e?.code ?? e?.statusCode ?? e) === '403' || /403|forbidden/i.test(String(e?.message ?? e)) ? false : Promise.reject(e)),
      );
    // Without the create rule the first write (a create) is forbidden; with all rules it works.
    expect(await write([rules[1]], ['a'])).toBe(false);
    expect(await write(rules, ['a'])).toBe(true);
    // Without the (named) patch rule, an update is forbidden; with it, fine.
    expect(await write([rules[0]], ['a', 'b'])).toBe(false);
    expect(await write(rules, ['a', 'b'])).toBe(true);
    const live = await getObject<any>(list([]));
    expect(live.spec.images.map((i: { name: string }) => i.name)).toEqual(['a', 'b']);
    await deleteObject(list([]));
  }, 60_000);
});
