// What a student or a workspace manager may not ask of an Instance, on a real API server: the
// InstanceAdmissionPolicy construct is rendered and applied, the Workspace and Tenant sets of a small
// lab are rendered by the composition and applied with the PlatformChart's ClusterRoles (as
// tenant-isolation.test.ts does), and each person acts with a client certificate carrying the user
// name `<tenant>` and the groups `kubernetes:workspace-<ws>:<role>` (docs/behaviour.md §4.2, §5.4).
// The API server evaluates the policy, and its `authorizer` asks the RBAC the sets granted.
//
// Unlike the install, whose binding covers every namespace, this run's binding selects only the
// namespaces carrying this run's label (matchResources.namespaceSelector), so other tests are not
// affected.
import type { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InstanceAdmissionPolicy } from '../../constructs/platform/instance-admission-policy.ts';
import { PlatformChart } from '../../constructs/platform/platform-chart.ts';
import { compose, renderAll } from '../../src/compose/compose.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { Inventory } from '../../src/inputs/inventory.ts';
import type { InputObject } from '../../src/inputs/types.ts';
import { testConfig } from '../support/lab.ts';
import { ApiError, apiError, deleteAll, getObject, kubeConfigFor, rest, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const CL = 'crownlabs.polito.it';
const SELECTOR = 'crownlabs.polito.it/operator-selector';
const MARK = 'composer-test/instance-admission';
const sfx = Math.random().toString(36).slice(2, 7).replace(/[^a-z0-9]/g, 'x');
const shard = `adm-${sfx}`;
const WS_A = `wsa-${sfx}`;
const WS_B = `wsb-${sfx}`;
const ALICE = `alice-${sfx}`;
const BOB = `bob-${sfx}`;
const CAROL = `carol-${sfx}`;
// A namespace named like a tenant namespace but not labelled as one, and one that is neither.
const DAVE = `dave-${sfx}`;
const UNLABELLED = `tenant-${DAVE}`;
const PLAIN = `plain-${sfx}`;
const nsOf = (tenant: string) => `tenant-${tenant}`;
const wsNs = (ws: string) => `workspace-${ws}`;
const group = (ws: string, role: 'user' | 'manager') => `kubernetes:workspace-${ws}:${role}`;
const CONTROLLER = `system:serviceaccount:${shard}:crownlabs-controller`;

const config: ComposerConfig = testConfig({ targetLabel: { key: SELECTOR, value: shard }, namespaceWhitelist: { [SELECTOR]: shard }, mydrivePvcsNamespace: `${shard}-mydrive` });
const target = { [SELECTOR]: shard };

const workspace = (name: string): KubeObject => ({ apiVersion: `${CL}/v1alpha1`, kind: 'Workspace', metadata: { name, labels: target }, spec: { prettyName: name, quota: { cpu: 8, memory: '16Gi', instances: 8 } } });
const tenant = (name: string, workspaces: { name: string; role: 'user' | 'manager' }[]): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Tenant',
  metadata: { name, labels: target },
  spec: { firstName: name, lastName: 'Test', email: `${name}@example.org`, workspaces },
});
const template = (ws: string): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Template',
  metadata: { name: 'tmpl', namespace: wsNs(ws) },
  spec: {
    prettyName: 'tmpl',
    description: 'admission test',
    'workspace.crownlabs.polito.it/WorkspaceRef': { name: ws },
    environmentList: [{ name: 'desk', image: 'registry.example/desk:1', environmentType: 'Container', resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi' } }],
  },
});
const instance = (ns: string, name: string, owner: string, ws = WS_A): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Instance',
  metadata: { name, namespace: ns },
  spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'tmpl', namespace: wsNs(ws) }, 'tenant.crownlabs.polito.it/TenantRef': { name: owner } },
});

const inputs: KubeObject[] = [workspace(WS_A), workspace(WS_B), tenant(ALICE, [{ name: WS_A, role: 'user' }]), tenant(BOB, [{ name: WS_B, role: 'user' }]), tenant(CAROL, [{ name: WS_A, role: 'manager' }])];
let rendered: KubeObject[] = [];
let policy: KubeObject[] = [];
let extra: KubeObject[] = [];
const users: Record<string, KubeConfig> = {};

const path = (ns: string, name?: string) => `/apis/${CL}/v1alpha2/namespaces/${ns}/instances${name ? `/${name}` : ''}`;
const create = (user: string, obj: KubeObject, dryRun = true) =>
  rest(users[user]).request('POST', path(obj.metadata.namespace!), { body: obj, query: { dryRun: dryRun ? 'All' : undefined } });
const mergePatch = (user: string, ns: string, name: string, body: unknown) => rest(users[user]).request('PATCH', path(ns, name), { body, contentType: 'application/merge-patch+json' });
/** The policy's denial: its HTTP code, and its message without the API server's prefix. */
async function denial(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  const e = await apiError(p);
  const m = /ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: (.*)$/s.exec(e.message);
  expect(m, `a denial of the policy, not: ${e.message}`).not.toBeNull();
  return { code: e.code, message: m![1] };
}

beforeAll(async () => {
  await serverSideApply(new PlatformChart(new App(), 'platform', { sandboxClusterRole: config.sandboxClusterRole }).toJson() as KubeObject[]);
  await serverSideApply(inputs);
  const { inventory, problems } = Inventory.fromObjects(inputs.map((object, document) => ({ object: object as unknown as InputObject, source: { file: 'admission', document } })));
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  rendered = renderAll(compose(inventory, config)).flatMap((s) => s.objects);
  // This run's label on the namespaces the binding below selects.
  for (const o of rendered) if (o.kind === 'Namespace') o.metadata.labels = { ...(o.metadata.labels as Record<string, string>), [MARK]: sfx };
  extra = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: UNLABELLED, labels: { [MARK]: sfx } } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: PLAIN, labels: { [MARK]: sfx } } },
    // The controller may create Instances in alice's namespace (its real role is cluster-wide).
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'test-controller-instances', namespace: nsOf(ALICE) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-instances' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: CONTROLLER }],
    } as KubeObject,
  ];
  await serverSideApply([...rendered.filter((o) => o.kind === 'Namespace'), ...extra.filter((o) => o.kind === 'Namespace')]);
  await serverSideApply([...rendered.filter((o) => o.kind !== 'Namespace'), ...extra.filter((o) => o.kind !== 'Namespace')]);
  // Quota admission refuses Instances while a ResourceQuota has no status: wait for the quota controller.
  for (const rq of rendered.filter((o) => o.kind === 'ResourceQuota')) {
    await waitFor(async () => {
      const live = await getObject<{ status?: { hard?: Record<string, string>; used?: Record<string, string> } }>({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: rq.metadata });
      return live?.status?.used !== undefined && Object.keys(live.status.hard ?? {}).length > 0;
    }, { timeoutMs: 60_000, message: `status of ResourceQuota ${rq.metadata.namespace}/${rq.metadata.name}` });
  }
  await serverSideApply([template(WS_A), template(WS_B)]);

  const chart = new Chart(new App(), 'policy');
  new InstanceAdmissionPolicy(chart, 'p', { writers: [CONTROLLER], name: uniqueName('crownlabs-instance-admission') });
  policy = chart.toJson() as KubeObject[];
  const binding = policy.find((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as KubeObject & { spec: Record<string, unknown> };
  binding.spec.matchResources = { namespaceSelector: { matchLabels: { [MARK]: sfx } } };
  await serverSideApply(policy);

  users[ALICE] = await kubeConfigFor(ALICE, [group(WS_A, 'user')]);
  users[CAROL] = await kubeConfigFor(CAROL, [group(WS_A, 'manager')]);
  users[CONTROLLER] = await kubeConfigFor(CONTROLLER, ['system:serviceaccounts', `system:serviceaccounts:${shard}`]);
  users.admin = rest().kubeConfig;
  // Policies and RBAC reach the API server through informers: wait until both are in force.
  await waitFor(async () => {
    try {
      await create(ALICE, instance(nsOf(ALICE), 'x'.repeat(64), ALICE));
      return false;
    } catch (e) {
      return e instanceof ApiError && /denied request: metadata\.name/.test(e.message);
    }
  }, { timeoutMs: 60_000, message: 'the policy to be enforced' });
  const review = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: CL, resource: 'instances', verb: 'create', namespace: nsOf(ALICE) } } };
  await waitFor(async () => (await rest(users[CONTROLLER]).request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { body: review })).status.allowed === true, {
    timeoutMs: 30_000,
    message: "the controller's binding to be visible",
  });
}, 180_000);

afterAll(async () => {
  await deleteAll([...policy, template(WS_A), template(WS_B), ...inputs, ...rendered, ...extra]);
});

describe('a student (alice, user of ws-a) in her own namespace', () => {
  const mine = nsOf(ALICE);

  it('may not create an Instance whose name is too long to render, and is told why; 50 characters pass', async () => {
    const d = await denial(create(ALICE, instance(mine, 'a'.repeat(64), ALICE)));
    expect(d.code).toBe(422);
    expect(d.message).toBe(
      'metadata.name: an Instance name is at most 50 characters: names and label values derived from it (the Service "<name>-oauth2-proxy", the Job "<name>-submitter") are limited to 63 (this one has 64)',
    );
    expect((await denial(create(ALICE, instance(mine, 'a'.repeat(51), ALICE)))).message).toContain('(this one has 51)');
    await create(ALICE, instance(mine, 'a'.repeat(50), ALICE));
  });

  it("may not take the name of her tenant's Secret mydrive-info, written with a dash or a dot", async () => {
    for (const name of ['mydrive-info', 'mydrive.info']) {
      const d = await denial(create(ALICE, instance(mine, name, ALICE)));
      expect(d.code).toBe(422);
      expect(d.message).toMatch(new RegExp(`^metadata\\.name: "${name.replace('.', '\\.')}" is reserved: one of the Instance's objects would take the name of an object of the tenant's namespace \\(.*mydrive-info\\)$`));
    }
    await create(ALICE, instance(mine, 'mydrive', ALICE));
  });

  it('may not name another Tenant as the owner, on create or by a later edit', async () => {
    const d = await denial(create(ALICE, instance(mine, 'foreign', BOB)));
    expect(d.code).toBe(403);
    expect(d.message).toBe(`spec["tenant.crownlabs.polito.it/TenantRef"].name: ${BOB} is not the owner of namespace ${mine} (Tenant ${ALICE}): an Instance in a tenant namespace belongs to its Tenant`);
    await create(ALICE, instance(mine, 'owned', ALICE), false);
    expect((await denial(mergePatch(ALICE, mine, 'owned', { spec: { 'tenant.crownlabs.polito.it/TenantRef': { name: BOB } } }))).code).toBe(403);
  });

  it("may not run a Template of a workspace she is not enrolled in, on create or by a later edit; her own workspace's Template runs", async () => {
    const d = await denial(create(ALICE, instance(mine, 'other-ws', ALICE, WS_B)));
    expect(d.code).toBe(403);
    expect(d.message).toBe(`spec["template.crownlabs.polito.it/TemplateRef"]: ${ALICE} may not read Template ${wsNs(WS_B)}/tmpl: only the users and managers of its workspace may run it`);
    await create(ALICE, instance(mine, 'own-ws', ALICE), false);
    const edit = await denial(mergePatch(ALICE, mine, 'own-ws', { spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'tmpl', namespace: wsNs(WS_B) } } }));
    expect(edit.code).toBe(403);
    // Edits that keep the owner and the Template pass.
    await mergePatch(ALICE, mine, 'own-ws', { spec: { running: false } });
  });
});

describe('a workspace manager (carol, manager of ws-a)', () => {
  it("creates Instances of her workspace in a student's namespace for that student only", async () => {
    await create(CAROL, instance(nsOf(ALICE), 'for-alice', ALICE));
    expect((await denial(create(CAROL, instance(nsOf(ALICE), 'for-carol', CAROL)))).code).toBe(403);
    expect((await denial(create(CAROL, instance(nsOf(ALICE), 'other-ws', ALICE, WS_B)))).code).toBe(403);
  });

  it('in a namespace named like a tenant namespace but not labelled as one, the owner is the Tenant of that name', async () => {
    await create(CAROL, instance(UNLABELLED, 'for-dave', DAVE));
    expect((await denial(create(CAROL, instance(UNLABELLED, 'for-alice', ALICE)))).message).toBe(
      `spec["tenant.crownlabs.polito.it/TenantRef"].name: ${ALICE} is not the owner of namespace ${UNLABELLED}: an Instance in a tenant namespace belongs to its Tenant`,
    );
  });

  it('in a namespace that is no tenant namespace, any owner is admitted (as upstream); names and Templates are still checked', async () => {
    await create(CAROL, instance(PLAIN, 'for-alice', ALICE));
    await create(CAROL, instance(PLAIN, 'for-bob', BOB));
    expect((await denial(create(CAROL, instance(PLAIN, 'b'.repeat(64), ALICE)))).code).toBe(422);
    expect((await denial(create(CAROL, instance(PLAIN, 'other-ws', ALICE, WS_B)))).code).toBe(403);
  });
});

describe('not checked', () => {
  it("the controller's ServiceAccount and system:masters", async () => {
    for (const who of [CONTROLLER, 'admin']) {
      await create(who, instance(nsOf(ALICE), 'c'.repeat(64), ALICE));
      await create(who, instance(nsOf(ALICE), 'mydrive-info', ALICE));
      await create(who, instance(nsOf(ALICE), 'foreign', BOB));
      await create(who, instance(nsOf(ALICE), 'other-ws', ALICE, WS_B));
    }
  });
});
