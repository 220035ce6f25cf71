// Helpers of the controller integration tests: a small lab with every environment type under a
// unique target label (so tests in the shared cluster never see each other's objects), the
// controller started in-process, and the "one composition" check.
import { pino } from 'pino';
import { Inventory } from '../../src/inputs/inventory.ts';
import { checkObject, type SourcedObject } from '../../src/inputs/parse.ts';
import type { Problem } from '../../src/inputs/problems.ts';
import type { KubeObject as InputKubeObject } from '../../src/inputs/types.ts';
import { compose, renderAll } from '../../src/compose/compose.ts';
import { defaultConfig, type ComposerConfig } from '../../src/config/config.ts';
import { startController, type ControllerHandle, type ControllerOptions } from '../../src/controller/controller.ts';
import { withOwner } from '../../src/controller/apply-set.ts';
import type { RequestRecord } from '../../src/kube/client.ts';
import { adminKubeConfig, ApiError, getObject, listObjects, rest, waitFor, type KubeObject } from './cluster.ts';

export const SELECTOR = 'crownlabs.polito.it/operator-selector';

export function labConfig(shard: string, overrides: Partial<ComposerConfig> = {}): ComposerConfig {
  return {
    ...defaultConfig(),
    targetLabel: { key: SELECTOR, value: shard },
    namespaceWhitelist: { [SELECTOR]: shard },
    mydrivePvcsNamespace: `${shard}-mydrive`,
    websiteBaseUrl: 'crownlabs.test',
    cookieSecretSeed: 'integration-seed-0123456789abcdef0123456789',
    ...overrides,
  };
}

export const FLAVOURS = [
  { name: 'vm', environmentType: 'VirtualMachine', persistent: false, guiEnabled: true },
  { name: 'pvm', environmentType: 'VirtualMachine', persistent: true, guiEnabled: true },
  { name: 'cloud', environmentType: 'CloudVM', persistent: true, guiEnabled: false },
  { name: 'desk', environmentType: 'Container', persistent: false, guiEnabled: true },
  { name: 'pdesk', environmentType: 'Container', persistent: true, guiEnabled: true },
  { name: 'app', environmentType: 'Standalone', persistent: false, guiEnabled: true },
] as const;

export interface Lab {
  shard: string;
  workspace: string;
  tenants: string[];
  tenantNs: string;
  workspaceNs: string;
  inputs: { cluster: KubeObject[]; namespaced: KubeObject[] };
}

/** The lab's cluster-scoped inputs (Workspace, Tenants) and namespaced ones (Templates, Instances). */
export function lab(shard: string): Lab {
  const ws = `${shard}-ws`;
  const alice = `${shard}.alice`;
  const bob = `${shard}.bob`;
  const tenantNs = `tenant-${shard}-alice`;
  const workspaceNs = `workspace-${ws}`;
  const target = { [SELECTOR]: shard };
  // The quota is enforced (kube-controller-manager computes its usage): room for the lab's six
  // Instances and the ones tests add, and for the 32Gi memory limit of a snapshot Job's pod.
  const cluster: KubeObject[] = [
    { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: ws, labels: target }, spec: { prettyName: 'Networks', quota: { cpu: 8, memory: '40Gi', instances: 10 } } },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: alice, labels: target },
      spec: {
        firstName: 'Alice',
        lastLogin: new Date().toISOString(),
        lastName: "O'Neil",
        email: 'Alice@Example.org',
        createSandbox: true,
        workspaces: [
          { name: ws, role: 'user' },
          { name: `${shard}-missing-1`, role: 'user' },
          { name: `${shard}-missing-2`, role: 'user' },
        ],
        publicKeys: ['ssh-ed25519 AAAAalice alice@laptop'],
      },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: bob, labels: target },
      spec: { firstName: 'Bob', lastName: 'Manager', email: 'bob@example.org', workspaces: [{ name: ws, role: 'manager' }], publicKeys: ['ssh-ed25519 AAAAbob bob@laptop'] },
    },
  ];
  const namespaced: KubeObject[] = [];
  for (const f of FLAVOURS) {
    namespaced.push({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Template',
      metadata: { name: f.name, namespace: workspaceNs },
      spec: {
        prettyName: f.name,
        description: `${f.environmentType} template`,
        'workspace.crownlabs.polito.it/WorkspaceRef': { name: ws },
        environmentList: [
          {
            name: f.name,
            image: `registry.example/${f.name}:1`,
            environmentType: f.environmentType,
            persistent: f.persistent,
            guiEnabled: f.guiEnabled,
            mountMyDriveVolume: false,
            resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi', ...(f.persistent ? { disk: '10Gi' } : {}) },
          },
        ],
      },
    });
    namespaced.push({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: `${f.name}-1`, namespace: tenantNs },
      spec: {
        running: true,
        'template.crownlabs.polito.it/TemplateRef': { name: f.name, namespace: workspaceNs },
        'tenant.crownlabs.polito.it/TenantRef': { name: alice },
      },
    });
  }
  return { shard, workspace: ws, tenants: [alice, bob], tenantNs, workspaceNs, inputs: { cluster, namespaced } };
}

/**
 * Gives the lab's first tenant (alice) its own quota: a Tenant's spec.quota is taken verbatim, not
 * capped like the sum over its workspaces (10 Instances). For tests that create many Instances:
 * quota admission refuses what the quota does not cover, as in a real cluster.
 */
export function withTenantQuota(l: Lab, quota: { cpu: number; memory: string; instances: number }): Lab {
  const alice = l.inputs.cluster.find((o) => o.kind === 'Tenant' && o.metadata.name === l.tenants[0])!;
  (alice.spec as Record<string, unknown>).quota = quota;
  return l;
}

export function shardName(prefix = 'ct'): string {
  return `${prefix}${Date.now().toString(36).slice(-5)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

export async function create(obj: KubeObject): Promise<KubeObject> {
  const c = rest();
  const p = await c.resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace ?? null);
  return c.request('POST', p, { body: obj });
}

export async function createIgnoringConflict(obj: KubeObject): Promise<void> {
  try {
    await create(obj);
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 409)) throw e;
  }
}

export async function patch(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>, body: unknown, sub?: string, contentType = 'application/merge-patch+json'): Promise<any> {
  const c = rest();
  const p = await c.resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
  return c.request('PATCH', sub ? `${p}/${sub}` : p, { body, contentType });
}

export interface RunningController {
  handle: ControllerHandle;
  requests: RequestRecord[];
  /** Keys reconciled, in order. */
  reconciled: string[];
  /** Every request that writes, but those to the leader Lease: its renewals tick on a timer, whatever the lab does. */
  writes(): RequestRecord[];
}

/** Starts the controller in-process, counting every request it sends (watches excepted). */
export async function runController(config: ComposerConfig, options: Partial<ControllerOptions> = {}): Promise<RunningController> {
  const requests: RequestRecord[] = [];
  const reconciled: string[] = [];
  const handle = await startController({
    kubeConfig: adminKubeConfig(),
    config,
    metricsAddr: '127.0.0.1:0',
    healthProbeAddr: '127.0.0.1:0',
    maxConcurrentReconciles: 4,
    logger: pino({ level: process.env.CONTROLLER_LOG ?? 'silent' }),
    onRequest: (r) => requests.push(r),
    onReconcile: (key) => reconciled.push(key),
    ...options,
  });
  return { handle, requests, reconciled, writes: () => countedWrites(requests) };
}

/** Every request that writes, but those to the leader Lease (its renewals tick on a timer, whatever the lab does). */
export function countedWrites(requests: readonly RequestRecord[]): RequestRecord[] {
  return requests.filter((r) => r.method !== 'GET' && !r.path.startsWith('/apis/coordination.k8s.io/'));
}

/**
 * A lab of its own shard whose Tenants and Instance `desk-1` (with the Templates) a controller has
 * converged: `child` of the Instance exists. The caller owns the lab and the running controller.
 */
export async function convergedDesk(prefix: string, child: { apiVersion: string; kind: string }): Promise<{ l: Lab; config: ComposerConfig; ctl: RunningController }> {
  const l = lab(shardName(prefix));
  const config = labConfig(l.shard);
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  const ctl = await runController(config);
  try {
    await waitFor(() => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } }), { timeoutMs: 60_000, message: 'tenant namespace' });
    for (const o of l.inputs.namespaced.filter((o) => o.kind === 'Template' || o.metadata.name === 'desk-1')) await create(o);
    await waitFor(() => liveOf({ ...child, metadata: { namespace: l.tenantNs, name: 'desk-1' } }), { timeoutMs: 60_000, message: `the Instance's ${child.kind}` });
  } catch (e) {
    await ctl.handle.stop();
    await cleanupLab(l);
    throw e;
  }
  return { l, config, ctl };
}

/** Reads the inputs back from the cluster, the way the controller's caches see them. */
export async function inventoryFromCluster(l: Lab): Promise<Inventory> {
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  const add = (items: KubeObject[], apiVersion: string, kind: string) => {
    for (const it of items) checkObject({ ...it, apiVersion, kind }, { file: 'cluster', document: 1 }, problems, objects);
  };
  const sel = `${SELECTOR}=${l.shard}`;
  add(await listObjects('crownlabs.polito.it/v1alpha1', 'Workspace', { labelSelector: sel }), 'crownlabs.polito.it/v1alpha1', 'Workspace');
  add(await listObjects('crownlabs.polito.it/v1alpha2', 'Tenant', { labelSelector: sel }), 'crownlabs.polito.it/v1alpha2', 'Tenant');
  add(await listObjects('crownlabs.polito.it/v1alpha2', 'Template', { namespace: l.workspaceNs }), 'crownlabs.polito.it/v1alpha2', 'Template');
  add(await listObjects('crownlabs.polito.it/v1alpha2', 'Instance', { namespace: l.tenantNs }), 'crownlabs.polito.it/v1alpha2', 'Instance');
  const ns = await getObject<KubeObject>({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } });
  if (ns) add([ns], 'v1', 'Namespace');
  return Inventory.fromObjects(objects).inventory;
}

/** Every object `renderAll(compose(...))` gives for the lab, with the owner references the controller adds. */
export async function expectedObjects(l: Lab, config: ComposerConfig): Promise<InputKubeObject[]> {
  const inventory = await inventoryFromCluster(l);
  const sets = renderAll(compose(inventory, config, { myDriveShare: () => undefined, keepPersonalNamespace: (t) => t.spec.lastLogin !== undefined || [...inventory.instances.values()].some((i) => i.metadata.namespace === `tenant-${t.metadata.name.replace(/\./g, '-')}`) }));
  const out: InputKubeObject[] = [];
  for (const s of sets) {
    const p = s.unit.parent;
    const owner = p.kind === 'Instance' ? inventory.instances.get(`${p.namespace}/${p.name}`) : p.kind === 'Tenant' ? inventory.tenants.get(p.name) : inventory.workspaces.get(p.name);
    out.push(...withOwner(s.objects, owner as never));
  }
  return out;
}

export async function liveOf(o: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): Promise<KubeObject | undefined> {
  return getObject<KubeObject>({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } });
}

/**
 * Deletes a namespace. The test cluster runs no PVC-protection controller, so the
 * `kubernetes.io/pvc-protection` finalizer of its PVCs is removed first (else it stays Terminating).
 */
export async function deleteNamespaceWithPvcs(ns: string): Promise<void> {
  const c = rest();
  try {
    await c.request('DELETE', `/api/v1/namespaces/${ns}`);
  } catch {
    /* gone */
  }
  await releasePvcs(ns);
}

export async function releasePvcs(ns: string): Promise<void> {
  const c = rest();
  try {
    const list = await c.request('GET', `/api/v1/namespaces/${ns}/persistentvolumeclaims`);
    for (const pvc of list.items ?? []) {
      await c.request('PATCH', `/api/v1/namespaces/${ns}/persistentvolumeclaims/${pvc.metadata.name}`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' }).catch(() => undefined);
    }
  } catch {
    /* no namespace */
  }
}

/** Removes finalizers and deletes the lab's cluster-scoped inputs and namespaces. */
export async function cleanupLab(l: Lab): Promise<void> {
  const c = rest();
  for (const o of l.inputs.cluster) {
    try {
      await patch(o, { metadata: { finalizers: null } });
    } catch {
      /* gone */
    }
    try {
      await c.request('DELETE', await c.resourcePath(o.apiVersion, o.kind, undefined, o.metadata.name));
    } catch {
      /* gone */
    }
  }
  for (const ns of [l.tenantNs, l.workspaceNs, `sandbox-${l.shard}-alice`, `tenant-${l.shard}-bob`, `${l.shard}-mydrive`]) await deleteNamespaceWithPvcs(ns);
}

/**
 * Records every distinct phase the controller's Instance cache sees, by `namespace/name`: the
 * statuses the controller writes as kwok's Stages move the children along.
 */
export function phaseHistory(ctl: RunningController): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  ctl.handle.caches.instances.on((_t, obj) => {
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const list = seen.get(key) ?? [];
    const phase = (obj.status as { phase?: string } | undefined)?.phase;
    if (phase !== undefined && list[list.length - 1] !== phase) list.push(phase);
    seen.set(key, list);
  });
  return seen;
}

/** Whether `seen` lists phases in the order of `order` (each at most once in a row, none outside it). */
export function inOrder(seen: readonly string[], order: readonly string[]): boolean {
  let at = 0;
  for (const p of seen) {
    const i = order.indexOf(p, at);
    if (i < 0) return false;
    at = i;
  }
  return true;
}
