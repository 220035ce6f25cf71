// docs/behaviour.md §6 on a real API server, served by the controller as installed
// (test/integration/as-installed.ts): `crownlabs manifests` applied, the controller running as its
// ServiceAccount with the rendered Deployment's args, the rendered webhook configurations pointed
// at it. People with client certificates create and edit Tenants; the API server calls our hooks
// and enforces their answers, while the controller reconciles the same Tenants through them.
import { KubeConfig } from '@kubernetes/client-node';
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TENANT_FINALIZER } from '../../src/controller/context.ts';
import { LABEL } from '../../src/model/labels.ts';
import { WARN_LABEL_REVERTED, WARN_SERVICE_TENANT_LABEL } from '../../src/webhooks/tenant-mutation.ts';
import { COULD_NOT_FETCH_TENANT, DENY_MANAGER_EDIT, DENY_SELF_EDIT, notManagerOf } from '../../src/webhooks/tenant-validation.ts';
import { removeInstall, runInstalledController, INSTALL_NAMESPACE, type InstalledController } from './as-installed.ts';
import { createIgnoringConflict, labConfig } from './controller-support.ts';
import { adminKubeConfig, deleteAll, deleteNamespace, getObject, kubeConfigFor, rest, serverSideApply, waitFor, type KubeObject } from './cluster.ts';

const CL = 'crownlabs.polito.it';
const K = 'crownlabs.polito.it/operator-selector';
const sfx = Math.random().toString(36).slice(2, 7).replace(/[^a-z0-9]/g, 'x');
const P = `wh-${sfx}`;
const SHARD = P;
const UTILITIES = `${P}-utilities`;
const WS_A = `${P}-ws-a`;
const WS_B = `${P}-ws-b`;
const WS_C = `${P}-ws-c`;
const names = { ada: `${P}-ada`, bea: `${P}-bea`, carol: `${P}-carol`, dave: `${P}-dave`, mike: `${P}-mike`, eve: `${P}-eve`, mallory: `${P}-mallory`, zed: `${P}-zed`, zoe: `${P}-zoe`, root: `${P}-root` };
/** A ServiceAccount of a tenant's own (upstream's chart bypasses every ServiceAccount). */
const SA = { namespace: `${P}-sa`, name: 'robot' };
const SERVICE_TENANT = 'service-tenant';
const HOUR = 3600_000;
const TENANTS_PATH = `/apis/${CL}/v1alpha2/tenants`;
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');

type Ws = { name: string; role: 'manager' | 'user' };
const tenant = (name: string, workspaces: Ws[], extra: Record<string, unknown> = {}, labels?: Record<string, string>): KubeObject => ({
  apiVersion: `${CL}/v1alpha2`,
  kind: 'Tenant',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { firstName: 'First', lastName: 'Last', email: `${name}@example.com`, workspaces, ...extra },
});

interface Answer {
  code: number;
  body: any;
  warnings: string[];
}
/** One API request that also returns the `Warning` headers the API server relays from webhooks. */
async function call(kc: KubeConfig, method: string, urlPath: string, body?: unknown, contentType = 'application/json'): Promise<Answer> {
  const url = new URL(urlPath, kc.getCurrentCluster()!.server);
  const opts: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  if (payload) opts.headers = { ...opts.headers, 'Content-Type': contentType };
  return new Promise((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const raw = res.headers.warning;
        const warnings = (Array.isArray(raw) ? raw : raw ? [raw] : []).map((w) => w.replace(/^299 - "(.*)"$/, '$1'));
        resolve({ code: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, warnings });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}
const create = (kc: KubeConfig, obj: KubeObject) => call(kc, 'POST', TENANTS_PATH, obj);
const patch = (kc: KubeConfig, name: string, body: unknown) => call(kc, 'PATCH', `${TENANTS_PATH}/${name}`, body, 'application/merge-patch+json');
const get = async (name: string) => (await getObject<any>({ apiVersion: `${CL}/v1alpha2`, kind: 'Tenant', metadata: { name } }))!;
/** A kubeconfig that authenticates with a bearer token (a ServiceAccount's). */
function tokenKubeConfig(token: string): KubeConfig {
  const cluster = adminKubeConfig().getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, caFile: cluster.caFile, skipTLSVerify: false }],
    users: [{ name: 'sa', token }],
    contexts: [{ name: 'sa', cluster: 'test', user: 'sa' }],
    currentContext: 'sa',
  });
  return kc;
}
const deniedBy = (hook: 'validate' | 'mutate', message: string) => `admission webhook "${hook}.tenant.crownlabs.polito.it" denied the request: ${message}`;

describe('docs/behaviour.md §6 Tenant admission webhooks of the installed controller, called by the real API server', () => {
  let ctl: InstalledController | undefined;
  let rbac: KubeObject[] = [];
  const admin = () => adminKubeConfig();
  const kc: Record<string, KubeConfig> = {};

  const config = labConfig(SHARD, { baseWorkspaces: [UTILITIES] });

  beforeAll(async () => {
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
    ctl = await runInstalledController(config, {
      webhookScope: `object.metadata.name.startsWith('${P}-') || object.metadata.name == '${SERVICE_TENANT}'`,
    });

    // RBAC: everyone in this test may read, create and edit Tenants; the webhooks do the rest.
    // mallory may delete them too.
    const users = [names.ada, names.carol, names.dave, names.mike, names.mallory];
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: SA.namespace } });
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: SA });
    rbac = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${P}-tenants` }, rules: [{ apiGroups: [CL], resources: ['tenants'], verbs: ['get', 'list', 'create', 'update', 'patch'] }] },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${P}-tenants` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${P}-tenants` },
        subjects: [...users.map((name) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name })), { kind: 'ServiceAccount', ...SA }],
      },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${P}-tenants-delete` }, rules: [{ apiGroups: [CL], resources: ['tenants'], verbs: ['delete'] }] },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${P}-tenants-delete` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${P}-tenants-delete` },
        subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: names.mallory }],
      },
    ];
    await serverSideApply(rbac);
    for (const u of users) kc[u] = await kubeConfigFor(u, ['crownlabs:testers']);
    // The install bypasses only system:masters (the `--webhook-bypass-groups` default it renders).
    kc[names.root] = await kubeConfigFor(names.root, ['system:masters']);

    // The people: carol manages ws-a and the base workspace and uses ws-c; dave uses ws-a; mike
    // manages ws-b and uses ws-a.
    for (const t of [
      tenant(names.carol, [{ name: WS_A, role: 'manager' }, { name: UTILITIES, role: 'manager' }, { name: WS_C, role: 'user' }]),
      tenant(names.dave, [{ name: WS_A, role: 'user' }]),
      tenant(names.mike, [{ name: WS_B, role: 'manager' }, { name: WS_A, role: 'user' }]),
      tenant(names.ada, [{ name: WS_A, role: 'user' }], { publicKeys: ['ssh-ed25519 AAAA old'], lastLogin: iso(Date.now() - 48 * HOUR) }),
      tenant(names.bea, [{ name: WS_A, role: 'user' }]),
    ]) {
      const r = await create(admin(), t);
      expect(r.code, JSON.stringify(r.body)).toBe(201);
    }
  });

  afterAll(async () => {
    try {
      await ctl?.stop();
    } finally {
      // The controller's finalizer stays on the Tenants it reconciled: release it, then remove them and their namespaces.
      const tenants = [...Object.values(names), SERVICE_TENANT].map((name) => ({ apiVersion: `${CL}/v1alpha2`, kind: 'Tenant', metadata: { name } }));
      for (const t of tenants) await patch(admin(), t.metadata.name, { metadata: { finalizers: null } });
      await deleteAll(tenants);
      for (const name of Object.values(names)) await deleteNamespace(`tenant-${name}`);
      await deleteNamespace(config.mydrivePvcsNamespace);
      await deleteNamespace(SA.namespace);
      await deleteAll(rbac);
      await removeInstall(ctl);
    }
  });

  describe('the controller, as installed, through its own webhooks', () => {
    it('authenticates as the rendered ServiceAccount and writes its finalizer and labels on the Tenants it reconciles', async () => {
      expect(ctl!.userName).toBe(`system:serviceaccount:${INSTALL_NAMESPACE}:crownlabs-controller`);
      await waitFor(async () => {
        const carol = await get(names.carol);
        return carol.metadata.finalizers?.includes(TENANT_FINALIZER) && carol.metadata.labels?.[LABEL.firstName] === 'First' && carol.status?.ready !== undefined;
      }, { timeoutMs: 60_000, message: 'the installed controller wrote carol\'s finalizer, labels and status' });
    });
  });

  describe('§6.1 mutating', () => {
    it('a new Tenant gets the target label and the base workspaces (role user), its own entries kept', async () => {
      const ada = await get(names.ada);
      expect(ada.metadata.labels[K]).toBe(SHARD);
      expect(ada.spec.workspaces).toEqual([
        { name: WS_A, role: 'user' },
        { name: UTILITIES, role: 'user' },
      ]);
      // carol already listed the base workspace, as manager: kept, not duplicated.
      expect((await get(names.carol)).spec.workspaces.filter((w: Ws) => w.name === UTILITIES)).toEqual([{ name: UTILITIES, role: 'manager' }]);
    });

    it('changing the target label is reverted, with a warning; so is removing it', async () => {
      const changed = await patch(kc[names.carol], names.bea, { metadata: { labels: { [K]: 'elsewhere', team: 'x' } } });
      expect(changed.code, JSON.stringify(changed.body)).toBe(200);
      expect(changed.warnings).toEqual([WARN_LABEL_REVERTED]);
      expect(changed.body.metadata.labels).toMatchObject({ [K]: SHARD, team: 'x' });
      const removed = await patch(kc[names.carol], names.bea, { metadata: { labels: { [K]: null } } });
      expect(removed.warnings).toEqual([WARN_LABEL_REVERTED]);
      expect((await get(names.bea)).metadata.labels).toMatchObject({ [K]: SHARD, team: 'x' });
    });

    it('a bypass-group member may move a Tenant to another shard', async () => {
      const r = await patch(kc[names.root], names.bea, { metadata: { labels: { [K]: 'other-shard' } } });
      expect(r.code, JSON.stringify(r.body)).toBe(200);
      expect(r.warnings).toEqual([]);
      expect((await get(names.bea)).metadata.labels[K]).toBe('other-shard');
    });

    it('service-tenant never keeps the target label', async () => {
      const r = await create(admin(), tenant(SERVICE_TENANT, [], {}, { [K]: SHARD }));
      expect(r.code, JSON.stringify(r.body)).toBe(201);
      expect(r.warnings).toEqual([WARN_SERVICE_TENANT_LABEL]);
      expect(r.body.metadata.labels).toEqual({ [K]: '' });
      expect(r.body.spec.workspaces).toEqual([{ name: UTILITIES, role: 'user' }]);
    });
  });

  describe('§6.2 validating: self edit', () => {
    it('the owner may change their public keys', async () => {
      const r = await patch(kc[names.ada], names.ada, { spec: { publicKeys: ['ssh-ed25519 AAAA new'] } });
      expect(r.code, JSON.stringify(r.body)).toBe(200);
      expect((await get(names.ada)).spec.publicKeys).toEqual(['ssh-ed25519 AAAA new']);
    });

    it('the owner may set lastLogin within ±24h of the server time, not beyond', async () => {
      const now = await patch(kc[names.ada], names.ada, { spec: { lastLogin: iso(Date.now()) } });
      expect(now.code, JSON.stringify(now.body)).toBe(200);
      const early = await patch(kc[names.ada], names.ada, { spec: { lastLogin: iso(Date.now() - 23 * HOUR) } });
      expect(early.code, JSON.stringify(early.body)).toBe(200);
      for (const off of [25 * HOUR, -25 * HOUR]) {
        const r = await patch(kc[names.ada], names.ada, { spec: { lastLogin: iso(Date.now() + off) } });
        expect(r.code).toBe(403);
        expect(r.body.message).toMatch(/admission webhook "validate.tenant.crownlabs.polito.it" denied the request: unacceptable last login time, must be within \+\/-24h0m0s since local server time/);
      }
    });

    it('any other change of the owner\'s own spec is denied', async () => {
      for (const spec of [{ firstName: 'Other' }, { createSandbox: true }, { workspaces: [{ name: WS_C, role: 'user' }] }]) {
        const r = await patch(kc[names.ada], names.ada, { spec });
        expect(r.code, JSON.stringify(spec)).toBe(403);
        expect(r.body.message).toBe(deniedBy('validate', DENY_SELF_EDIT));
      }
      expect((await get(names.ada)).spec.firstName).toBe('First');
    });

    it('a self-create with a full spec is denied', async () => {
      const r = await create(kc[names.mallory], tenant(names.mallory, []));
      expect(r.code).toBe(403);
      expect(r.body.message).toBe(deniedBy('validate', DENY_SELF_EDIT));
    });
  });

  describe('§6.2 validating: manager edit', () => {
    it('a manager may enrol, promote and remove a Tenant in the workspaces they manage', async () => {
      const ws = (await get(names.ada)).spec.workspaces as Ws[];
      const promoted = await patch(kc[names.carol], names.ada, { spec: { workspaces: ws.map((w) => (w.name === WS_A ? { ...w, role: 'manager' } : w)) } });
      expect(promoted.code, JSON.stringify(promoted.body)).toBe(200);
      const removed = await patch(kc[names.carol], names.ada, { spec: { workspaces: ws.filter((w) => w.name !== WS_A) } });
      expect(removed.code, JSON.stringify(removed.body)).toBe(200);
      const back = await patch(kc[names.carol], names.ada, { spec: { workspaces: ws } });
      expect(back.code).toBe(200);
      expect((await get(names.ada)).spec.workspaces).toEqual(ws);
    });

    it('enrolling in a workspace the requester does not manage is denied, naming it', async () => {
      const ws = (await get(names.ada)).spec.workspaces as Ws[];
      const r = await patch(kc[names.carol], names.ada, { spec: { workspaces: [...ws, { name: WS_C, role: 'user' }] } });
      expect(r.code).toBe(403);
      expect(r.body.message).toBe(deniedBy('validate', notManagerOf(WS_C)));
      const plainUser = await patch(kc[names.dave], names.ada, { spec: { workspaces: ws.filter((w) => w.name !== WS_A) } });
      expect(plainUser.code).toBe(403);
      expect(plainUser.body.message).toBe(deniedBy('validate', notManagerOf(WS_A)));
    });

    it('a manager may not change anything but workspaces of an existing Tenant', async () => {
      const r = await patch(kc[names.carol], names.ada, { spec: { lastName: 'Changed' } });
      expect(r.code).toBe(403);
      expect(r.body.message).toBe(deniedBy('validate', DENY_MANAGER_EDIT));
    });

    it('on CREATE a manager sets any spec, as long as every workspace (base ones included) is theirs', async () => {
      const ok = await create(kc[names.carol], tenant(names.zed, [{ name: WS_A, role: 'user' }], { createSandbox: true }));
      expect(ok.code, JSON.stringify(ok.body)).toBe(201);
      expect(ok.body.spec.workspaces).toEqual([
        { name: WS_A, role: 'user' },
        { name: UTILITIES, role: 'user' },
      ]);
      // dave manages nothing, and the mutating hook has added the base workspace before validation.
      const denied = await create(kc[names.dave], tenant(names.zoe, []));
      expect(denied.code).toBe(403);
      expect(denied.body.message).toBe(deniedBy('validate', notManagerOf(UTILITIES)));
    });

    it('a requester without a Tenant of their own gets 400 "could not fetch a tenant for the current user"', async () => {
      const r = await patch(kc[names.mallory], names.ada, { spec: { workspaces: [] } });
      expect(r.code).toBe(400);
      expect(r.body.message).toMatch(new RegExp(`^admission webhook "validate.tenant.crownlabs.polito.it" denied the request: ${COULD_NOT_FETCH_TENANT}: .*404`));
    });

    it('bypass groups skip validation altogether', async () => {
      const r = await patch(kc[names.root], names.ada, { spec: { firstName: 'Renamed', workspaces: [] } });
      expect(r.code, JSON.stringify(r.body)).toBe(200);
      // The mutating hook still adds the base workspace back.
      expect(r.body.spec).toMatchObject({ firstName: 'Renamed', workspaces: [{ name: UTILITIES, role: 'user' }] });
    });

    it('a Tenant outside the target shard is validated all the same', async () => {
      // bea was moved to another shard by a bypass user above: no objectSelector lets a write past the checks.
      await waitFor(async () => (await get(names.bea)).metadata.labels[K] === 'other-shard');
      const r = await patch(kc[names.dave], names.bea, { spec: { firstName: 'Free' } });
      expect(r.code, JSON.stringify(r.body)).toBe(403);
      expect(r.body.message).toBe(deniedBy('validate', DENY_MANAGER_EDIT));
    });

    it('service-tenant, which never carries the target label, is validated: a manager cannot make it manager of a workspace she does not manage', async () => {
      await waitFor(async () => (await get(SERVICE_TENANT)) !== undefined);
      const claimed = await patch(kc[names.carol], SERVICE_TENANT, { spec: { workspaces: [{ name: WS_C, role: 'manager' }, { name: UTILITIES, role: 'user' }], publicKeys: ['ssh-ed25519 AAAAcarol carol@laptop'] } });
      expect(claimed.code, JSON.stringify(claimed.body)).toBe(403);
      expect(claimed.body.message).toBe(deniedBy('validate', notManagerOf(WS_C)));
      const recreated = await create(kc[names.carol], tenant(`${P}-svc`, [{ name: WS_C, role: 'manager' }]));
      expect(recreated.code).toBe(403);
      expect((await get(SERVICE_TENANT)).spec.workspaces).toEqual([{ name: UTILITIES, role: 'user' }]);
    });
  });

  describe('§6.2 a sample of the decision matrix (test/unit/webhooks/tenant-decision-matrix.test.ts)', () => {
    const workspacesOf = async (name: string) => (await get(name)).spec.workspaces as Ws[];
    const withRole = (ws: Ws[], name: string, role: Ws['role']) => ws.map((w) => (w.name === name ? { ...w, role } : w));
    // eve, a plain user of ws-a, is the target of every change below.
    beforeAll(async () => {
      const r = await create(admin(), tenant(names.eve, [{ name: WS_A, role: 'user' }]));
      expect(r.code, JSON.stringify(r.body)).toBe(201);
    });

    it('a plain member of the workspace can promote no one to manager there, herself included', async () => {
      const ws = await workspacesOf(names.eve);
      const byMember = await patch(kc[names.dave], names.eve, { spec: { workspaces: withRole(ws, WS_A, 'manager') } });
      expect(byMember.code, JSON.stringify(byMember.body)).toBe(403);
      expect(byMember.body.message).toBe(deniedBy('validate', notManagerOf(WS_A)));
      const bySelf = await patch(kc[names.dave], names.dave, { spec: { workspaces: [{ name: WS_A, role: 'manager' }] } });
      expect(bySelf.code).toBe(403);
      expect(bySelf.body.message).toBe(deniedBy('validate', DENY_SELF_EDIT));
      expect(await workspacesOf(names.eve)).toEqual(ws);
    });

    it('a manager of another workspace cannot promote where she is a plain member, but enrols and removes in her own', async () => {
      const ws = await workspacesOf(names.eve);
      const promoted = await patch(kc[names.mike], names.eve, { spec: { workspaces: withRole(ws, WS_A, 'manager') } });
      expect(promoted.code).toBe(403);
      expect(promoted.body.message).toBe(deniedBy('validate', notManagerOf(WS_A)));
      const enrolled = await patch(kc[names.mike], names.eve, { spec: { workspaces: [...ws, { name: WS_B, role: 'user' }] } });
      expect(enrolled.code, JSON.stringify(enrolled.body)).toBe(200);
      const removed = await patch(kc[names.mike], names.eve, { spec: { workspaces: ws } });
      expect(removed.code, JSON.stringify(removed.body)).toBe(200);
      expect(await workspacesOf(names.eve)).toEqual(ws);
    });

    it('the workspace\'s manager promotes and demotes', async () => {
      const ws = await workspacesOf(names.eve);
      const promoted = await patch(kc[names.carol], names.eve, { spec: { workspaces: withRole(ws, WS_A, 'manager') } });
      expect(promoted.code, JSON.stringify(promoted.body)).toBe(200);
      expect((await workspacesOf(names.eve)).find((w) => w.name === WS_A)?.role).toBe('manager');
      const demoted = await patch(kc[names.carol], names.eve, { spec: { workspaces: ws } });
      expect(demoted.code, JSON.stringify(demoted.body)).toBe(200);
      expect(await workspacesOf(names.eve)).toEqual(ws);
    });

    it('a ServiceAccount is no bypass: it has no Tenant, so even a no-op write is refused', async () => {
      const token = await rest().request('POST', `/api/v1/namespaces/${SA.namespace}/serviceaccounts/${SA.name}/token`, {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
      });
      const r = await patch(tokenKubeConfig(token.status.token), names.eve, { metadata: { labels: { team: 'robots' } } });
      expect(r.code, JSON.stringify(r.body)).toBe(400);
      expect(r.body.message).toMatch(new RegExp(`^admission webhook "validate.tenant.crownlabs.polito.it" denied the request: ${COULD_NOT_FETCH_TENANT}: `));
      expect((await get(names.eve)).metadata.labels.team).toBeUndefined();
    });

    it('a deletion is RBAC\'s alone: the webhooks are not asked, so a requester without a Tenant may delete when RBAC lets her', async () => {
      const r = await call(kc[names.mallory], 'DELETE', `${TENANTS_PATH}/${names.zed}`);
      expect(r.code, JSON.stringify(r.body)).toBe(200);
      const refused = await call(kc[names.carol], 'DELETE', `${TENANTS_PATH}/${names.dave}`);
      expect(refused.code).toBe(403);
      expect(refused.body.message).toMatch(/cannot delete resource "tenants"/);
    });
  });

  describe('§2.1 the controller process serves the webhooks', () => {
    it('the requester of a manager edit is read from the controller\'s Tenant cache, not fetched', async () => {
      const managerEdits = ctl!.requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/tenants/${names.carol}`));
      expect(managerEdits).toEqual([]);
    });
  });
});
