// Tenant isolation on a real API server with RBAC on: the PlatformChart's ClusterRoles and the
// Workspace and Tenant sets of a small lab are applied for real, then each person acts with a client
// certificate carrying the groups the API server's OIDC setup would give them
// (`kubernetes:workspace-<ws>:<role>` per enrollment, docs/behaviour.md §4.2) and the user name `<tenant>`
// (docs/behaviour.md §5.4). Every rule is shown with at least one real request; SelfSubjectAccessReviews cover
// the remaining verbs.
//
// The lab: workspaces ws-a and ws-b; alice (user of ws-a), bob (user of ws-a, manager of ws-b),
// carol (manager of ws-a). Names carry a per-run suffix so reruns on a kept cluster never collide.
import { App } from 'cdk8s';
import type { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformChart } from '../../constructs/platform/platform-chart.ts';
import { Inventory } from '../../src/inputs/inventory.ts';
import { compose, renderAll } from '../../src/compose/compose.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { testConfig } from '../support/lab.ts';
import {
  ApiError,
  createObject,
  deleteAll,
  deleteObject,
  getObject,
  kubeConfigFor,
  rest,
  serverSideApply,
  waitFor,
  type KubeObject,
} from './cluster.ts';

const CL = 'crownlabs.polito.it';
const SELECTOR = 'crownlabs.polito.it/operator-selector';
const sfx = Math.random().toString(36).slice(2, 7).replace(/[^a-z0-9]/g, 'x');
const shard = `iso-${sfx}`;
const WS_A = `ws-a-${sfx}`;
const WS_B = `ws-b-${sfx}`;
const ALICE = `alice-${sfx}`;
const BOB = `bob-${sfx}`;
const CAROL = `carol-${sfx}`;
const nsOf = (tenant: string) => `tenant-${tenant}`;
const wsNs = (ws: string) => `workspace-${ws}`;
const group = (ws: string, role: 'user' | 'manager') => `kubernetes:workspace-${ws}:${role}`;

const config: ComposerConfig = testConfig({
  targetLabel: { key: SELECTOR, value: shard },
  namespaceWhitelist: { [SELECTOR]: shard },
  mydrivePvcsNamespace: `${shard}-mydrive`,
});
const target = { [SELECTOR]: shard };

const workspace = (name: string): KubeObject => ({
  apiVersion: `${CL}/v1alpha1`,
  kind: 'Workspace',
  metadata: { name, labels: target },
  spec: { prettyName: name, quota: { cpu: 8, memory: '16Gi', instances: 8 } },
});
const tenant = (name: string, workspaces: { name: string; role: 'user' | 'manager' }[]): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Tenant',
  metadata: { name, labels: target },
  spec: { firstName: name, lastName: 'Test', email: `${name}@example.org`, workspaces, publicKeys: [`ssh-ed25519 AAAA${name} ${name}@pc`] },
});
const template = (ws: string, name = 'tmpl'): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Template',
  metadata: { name, namespace: wsNs(ws) },
  spec: {
    prettyName: name,
    description: 'isolation test',
    'workspace.crownlabs.polito.it/WorkspaceRef': { name: ws },
    environmentList: [{ name: 'desk', image: 'registry.example/desk:1', environmentType: 'Container', resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi' } }],
  },
});
const instance = (ns: string, name: string, owner: string): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Instance',
  metadata: { name, namespace: ns },
  spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'tmpl', namespace: wsNs(WS_A) }, 'tenant.crownlabs.polito.it/TenantRef': { name: owner } },
});

const inputs: KubeObject[] = [
  workspace(WS_A),
  workspace(WS_B),
  tenant(ALICE, [{ name: WS_A, role: 'user' }]),
  tenant(BOB, [{ name: WS_A, role: 'user' }, { name: WS_B, role: 'manager' }]),
  tenant(CAROL, [{ name: WS_A, role: 'manager' }]),
];
let rendered: KubeObject[] = [];
const users: Record<string, KubeConfig> = {};

// -- requests as a user ------------------------------------------------------------------------
const instancesPath = (ns: string | null, name?: string) => `/apis/${CL}/v1alpha2${ns ? `/namespaces/${ns}` : ''}/instances${name ? `/${name}` : ''}`;
const templatesPath = (ns: string, name?: string) => `/apis/${CL}/v1alpha2/namespaces/${ns}/templates${name ? `/${name}` : ''}`;
const tenantPath = (name?: string) => `/apis/${CL}/v1alpha2/tenants${name ? `/${name}` : ''}`;
const secretPath = (ns: string, name = 'mydrive-info') => `/api/v1/namespaces/${ns}/secrets/${name}`;

const as = (user: string) => rest(users[user]);
/**
 * The HTTP status of a request as `user`. A 403 counts only when it is the RBAC authorizer's
 * ("User \"x\" cannot <verb> resource ..."); any other 403 (quota admission, say) fails the test.
 */
async function status(user: string, p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    if (e.code === 403) expect(String(e.body?.message), 'a 403 of the RBAC authorizer').toContain(`User "${user}" cannot `);
    return e.code;
  }
}
const get = (user: string, path: string) => status(user, as(user).request('GET', path));
const post = (user: string, path: string, body: unknown) => status(user, as(user).request('POST', path, { body }));
const del = (user: string, path: string) => status(user, as(user).request('DELETE', path));
const mergePatch = (user: string, path: string, body: unknown) =>
  status(user, as(user).request('PATCH', path, { body, contentType: 'application/merge-patch+json' }));

interface Attrs { verb: string; resource: string; group?: string; subresource?: string; namespace?: string; name?: string }
/** SelfSubjectAccessReview as `user`: what the authorizer answers without doing the request. */
async function can(user: string, a: Attrs): Promise<boolean> {
  const review = await as(user).request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: CL, ...a } } },
  });
  return review.status.allowed === true;
}

beforeAll(async () => {
  // What must pre-exist (docs/behaviour.md §3), rendered by our own construct.
  const platform = new PlatformChart(new App(), 'platform', { sandboxClusterRole: config.sandboxClusterRole }).toJson() as KubeObject[];
  await serverSideApply(platform);

  // The inputs, then what the Workspace and Tenant sets render for them.
  await serverSideApply(inputs);
  const { inventory, problems } = Inventory.fromObjects(inputs.map((object, document) => ({ object: object as any, source: { file: 'isolation', document } })));
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  const sets = renderAll(compose(inventory, config));
  expect(sets.map((s) => s.unit.parent.kind).sort()).toEqual(['Tenant', 'Tenant', 'Tenant', 'Workspace', 'Workspace']);
  rendered = sets.flatMap((s) => s.objects);
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  await serverSideApply(rendered.filter((o) => o.kind === 'Namespace'));
  await serverSideApply(rendered.filter((o) => o.kind !== 'Namespace'));

  // Quota admission refuses to create anything a ResourceQuota without status covers ("status
  // unknown for quota"): wait until kube-controller-manager's quota controller has published it.
  for (const rq of rendered.filter((o) => o.kind === 'ResourceQuota')) {
    const hard = Object.keys((rq.spec as { hard: Record<string, string> }).hard);
    await waitFor(async () => {
      const live = await getObject<any>({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: rq.metadata.name, namespace: rq.metadata.namespace } });
      return hard.every((k) => live?.status?.hard?.[k] !== undefined && live?.status?.used?.[k] !== undefined);
    }, { timeoutMs: 60_000, message: `status of ResourceQuota ${rq.metadata.namespace}/${rq.metadata.name}` });
  }

  // One Template per workspace, created by the admin.
  await serverSideApply([template(WS_A), template(WS_B)]);

  users[ALICE] = await kubeConfigFor(ALICE, [group(WS_A, 'user')]);
  users[BOB] = await kubeConfigFor(BOB, [group(WS_A, 'user'), group(WS_B, 'manager')]);
  users[CAROL] = await kubeConfigFor(CAROL, [group(WS_A, 'manager')]);
  // The RBAC authorizer reads bindings from informers: wait until the last ones are visible.
  await waitFor(async () => (await can(ALICE, { verb: 'create', resource: 'instances', namespace: nsOf(ALICE) })) && (await can(CAROL, { verb: 'patch', resource: 'tenants', name: ALICE })) && (await can(BOB, { verb: 'create', resource: 'templates', namespace: wsNs(WS_B) })), {
    message: 'RBAC bindings to be visible',
  });
}, 120_000);

afterAll(async () => {
  await deleteAll([...inputs, ...rendered]);
  await deleteObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  // The PlatformChart ClusterRoles stay: they are cluster-wide prerequisites other tests may share.
});

async function createIgnoringConflict(obj: KubeObject) {
  try {
    await createObject(obj);
  } catch (e) {
    if (!(e instanceof ApiError && e.code === 409)) throw e;
  }
}

describe('what the rendered RBAC objects are', () => {
  it('tenants are bound by user name, workspaces by OIDC group, to the PlatformChart ClusterRoles', () => {
    const byKey = (kind: string, name: string, ns?: string) => rendered.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === ns) as any;
    expect(byKey('RoleBinding', 'crownlabs-manage-instances', nsOf(ALICE)).subjects).toEqual([{ kind: 'User', name: ALICE, apiGroup: 'rbac.authorization.k8s.io' }]);
    expect(byKey('ClusterRoleBinding', `crownlabs-manage-instances-${WS_A}`).subjects).toEqual([{ kind: 'Group', name: group(WS_A, 'manager'), apiGroup: 'rbac.authorization.k8s.io' }]);
    // Every ClusterRole the rendered bindings refer to is rendered either by the PlatformChart or by a tenant set.
    const platform = new PlatformChart(new App(), 'p', {}).toJson().map((o: any) => o.metadata.name);
    const own = rendered.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name);
    for (const b of rendered.filter((o) => o.kind.endsWith('RoleBinding')) as any[]) expect([...platform, ...own], `${b.kind} ${b.metadata.name}`).toContain(b.roleRef.name);
  });
});

describe('a tenant (alice, user of ws-a)', () => {
  it('creates, lists, gets and deletes Instances in its own namespace', async () => {
    expect(await post(ALICE, instancesPath(nsOf(ALICE)), instance(nsOf(ALICE), 'mine', ALICE))).toBe(200);
    const list = await as(ALICE).request('GET', instancesPath(nsOf(ALICE)));
    expect(list.items.map((i: any) => i.metadata.name)).toEqual(['mine']);
    expect(await get(ALICE, instancesPath(nsOf(ALICE), 'mine'))).toBe(200);
    expect(await mergePatch(ALICE, instancesPath(nsOf(ALICE), 'mine'), { spec: { running: false } })).toBe(200);
    expect(await del(ALICE, instancesPath(nsOf(ALICE), 'mine'))).toBe(200);
    for (const verb of ['watch', 'update', 'deletecollection']) expect(await can(ALICE, { verb, resource: 'instances', namespace: nsOf(ALICE) }), verb).toBe(true);
    expect(await can(ALICE, { verb: 'patch', resource: 'instances', subresource: 'status', namespace: nsOf(ALICE) })).toBe(true);
  });

  it("gets 403 on Instances in another tenant's namespace, and cluster-wide", async () => {
    expect(await post(ALICE, instancesPath(nsOf(BOB)), instance(nsOf(BOB), 'intruder', ALICE))).toBe(403);
    expect(await get(ALICE, instancesPath(nsOf(BOB)))).toBe(403);
    expect(await get(ALICE, instancesPath(null))).toBe(403);
    await serverSideApply(instance(nsOf(BOB), 'bobs', BOB));
    expect(await get(ALICE, instancesPath(nsOf(BOB), 'bobs'))).toBe(403);
    expect(await del(ALICE, instancesPath(nsOf(BOB), 'bobs'))).toBe(403);
    expect(await getObject(instance(nsOf(BOB), 'bobs', BOB))).toBeDefined();
    await deleteObject(instance(nsOf(BOB), 'bobs', BOB));
  });

  it("reads no Secret: not another tenant's, and not its own (crownlabs-manage-instances grants none)", async () => {
    // The Secrets exist: mydrive-info is rendered by each tenant set.
    expect(await getObject({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: nsOf(ALICE) } })).toBeDefined();
    expect(await get(ALICE, secretPath(nsOf(BOB)))).toBe(403);
    expect(await get(ALICE, secretPath(nsOf(ALICE)))).toBe(403);
    expect(await get(ALICE, `/api/v1/namespaces/${nsOf(ALICE)}/secrets`)).toBe(403);
    // Nor any other object of its namespace, nor RBAC (no self-escalation).
    expect(await get(ALICE, `/api/v1/namespaces/${nsOf(ALICE)}/pods`)).toBe(403);
    expect(
      await post(ALICE, `/apis/rbac.authorization.k8s.io/v1/namespaces/${nsOf(ALICE)}/rolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'mine' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-instances' },
        subjects: [{ kind: 'User', name: BOB, apiGroup: 'rbac.authorization.k8s.io' }],
      }),
    ).toBe(403);
  });

  it('gets and patches its own Tenant, not another one, and cannot delete its own', async () => {
    expect(await get(ALICE, tenantPath(ALICE))).toBe(200);
    expect(await mergePatch(ALICE, tenantPath(ALICE), { spec: { publicKeys: [`ssh-ed25519 AAAAnew ${ALICE}@new`] } })).toBe(200);
    expect(((await getObject<any>(tenant(ALICE, []))).spec.publicKeys)).toEqual([`ssh-ed25519 AAAAnew ${ALICE}@new`]);
    // A list restricted to its own name is allowed (resourceNames + metadata.name field selector)...
    const own = await as(ALICE).request('GET', tenantPath(), { query: { fieldSelector: `metadata.name=${ALICE}` } });
    expect(own.items.map((t: any) => t.metadata.name)).toEqual([ALICE]);
    // ...the whole list is not.
    expect(await get(ALICE, tenantPath())).toBe(403);
    expect(await get(ALICE, tenantPath(BOB))).toBe(403);
    expect(await mergePatch(ALICE, tenantPath(BOB), { spec: { publicKeys: [] } })).toBe(403);
    expect(await del(ALICE, tenantPath(ALICE))).toBe(403);
    expect(await post(ALICE, tenantPath(), tenant(`eve-${sfx}`, []))).toBe(403);
    expect(await can(ALICE, { verb: 'update', resource: 'tenants', name: ALICE })).toBe(true);
    expect(await can(ALICE, { verb: 'watch', resource: 'tenants', name: ALICE })).toBe(true);
    expect(await can(ALICE, { verb: 'delete', resource: 'tenants', name: ALICE })).toBe(false);
  });

  it('only gets and lists the Templates of its workspace', async () => {
    expect(await get(ALICE, templatesPath(wsNs(WS_A), 'tmpl'))).toBe(200);
    expect(await get(ALICE, templatesPath(wsNs(WS_A)))).toBe(200);
    expect(await can(ALICE, { verb: 'watch', resource: 'templates', namespace: wsNs(WS_A) })).toBe(true);
    expect(await post(ALICE, templatesPath(wsNs(WS_A)), template(WS_A, 'mine'))).toBe(403);
    expect(await mergePatch(ALICE, templatesPath(wsNs(WS_A), 'tmpl'), { spec: { description: 'x' } })).toBe(403);
    expect(await del(ALICE, templatesPath(wsNs(WS_A), 'tmpl'))).toBe(403);
    // Not enrolled in ws-b: nothing there.
    expect(await get(ALICE, templatesPath(wsNs(WS_B)))).toBe(403);
    expect(await get(ALICE, templatesPath(wsNs(WS_B), 'tmpl'))).toBe(403);
  });
});

describe('a workspace manager (carol, manager of ws-a; bob, manager of ws-b)', () => {
  it("creates, edits and deletes Templates in its workspace's namespace, not in another's", async () => {
    expect(await post(CAROL, templatesPath(wsNs(WS_A)), template(WS_A, 'new'))).toBe(200);
    expect(await mergePatch(CAROL, templatesPath(wsNs(WS_A), 'new'), { spec: { description: 'edited' } })).toBe(200);
    expect(await del(CAROL, templatesPath(wsNs(WS_A), 'new'))).toBe(200);
    expect(await can(CAROL, { verb: 'deletecollection', resource: 'templates', namespace: wsNs(WS_A) })).toBe(true);
    expect(await post(CAROL, templatesPath(wsNs(WS_B)), template(WS_B, 'new'))).toBe(403);
    expect(await mergePatch(CAROL, templatesPath(wsNs(WS_B), 'tmpl'), { spec: { description: 'x' } })).toBe(403);
    // No rule grants carol (a manager, not a user, of ws-a... nor anything of ws-b) reads in ws-b.
    expect(await get(CAROL, templatesPath(wsNs(WS_B)))).toBe(403);

    // bob: manager of ws-b, only a user of ws-a.
    expect(await post(BOB, templatesPath(wsNs(WS_B)), template(WS_B, 'bobs'))).toBe(200);
    expect(await mergePatch(BOB, templatesPath(wsNs(WS_B), 'bobs'), { spec: { description: 'edited' } })).toBe(200);
    expect(await del(BOB, templatesPath(wsNs(WS_B), 'bobs'))).toBe(200);
    expect(await post(BOB, templatesPath(wsNs(WS_A)), template(WS_A, 'bobs'))).toBe(403);
    expect(await get(BOB, templatesPath(wsNs(WS_A)))).toBe(200);
  });

  it('manages Instances cluster-wide: crownlabs-manage-instances-<ws> is a ClusterRoleBinding (docs/behaviour.md §4.2 row 2, upstream design)', async () => {
    const crb = rendered.find((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === `crownlabs-manage-instances-${WS_A}`) as any;
    expect(crb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-instances' });
    // So carol reaches the Instances of every namespace, her workspace's students' and anybody else's.
    expect(await get(CAROL, instancesPath(null))).toBe(200);
    expect(await post(CAROL, instancesPath(nsOf(ALICE)), instance(nsOf(ALICE), 'by-carol', ALICE))).toBe(200);
    expect(await mergePatch(CAROL, instancesPath(nsOf(ALICE), 'by-carol'), { spec: { running: false } })).toBe(200);
    expect(await del(CAROL, instancesPath(nsOf(ALICE), 'by-carol'))).toBe(200);
    expect(await can(CAROL, { verb: 'create', resource: 'instances', namespace: nsOf(BOB) })).toBe(true);
    expect(await can(CAROL, { verb: 'deletecollection', resource: 'instances', namespace: 'default' })).toBe(true);
    // bob is a manager too (of ws-b): the binding is cluster-wide, so ws-a's namespaces as well.
    expect(await post(BOB, instancesPath(nsOf(ALICE)), instance(nsOf(ALICE), 'by-bob', ALICE))).toBe(200);
    expect(await del(BOB, instancesPath(nsOf(ALICE), 'by-bob'))).toBe(200);
    // Still no Secret access anywhere.
    expect(await get(CAROL, secretPath(nsOf(ALICE)))).toBe(403);
    expect(await get(CAROL, secretPath(nsOf(CAROL)))).toBe(403);
  });

  it('reads, creates and updates Tenants (crownlabs-manage-tenants) but cannot delete them', async () => {
    expect(await get(CAROL, tenantPath())).toBe(200);
    expect(await get(CAROL, tenantPath(ALICE))).toBe(200);
    expect(await mergePatch(CAROL, tenantPath(ALICE), { metadata: { annotations: { 'test.crownlabs.polito.it/edited-by': CAROL } } })).toBe(200);
    const live = await as(CAROL).request('GET', tenantPath(BOB));
    expect(await status(CAROL, as(CAROL).request('PUT', tenantPath(BOB), { body: { ...live, spec: { ...live.spec, lastName: 'Updated' } } }))).toBe(200);
    const eve = `eve-${sfx}`;
    expect(await post(CAROL, tenantPath(), tenant(eve, []))).toBe(200);
    expect(await del(CAROL, tenantPath(eve))).toBe(403);
    expect(await del(CAROL, tenantPath(ALICE))).toBe(403);
    expect(await can(CAROL, { verb: 'deletecollection', resource: 'tenants' })).toBe(false);
    await deleteObject(tenant(eve, []));
    // A plain user has none of this: alice cannot read bob (asserted above), nor delete anybody.
    expect(await del(BOB, tenantPath(ALICE))).toBe(403);
  });
});
