// docs/behaviour.md §6 on a real API server: the TenantWebhooks construct is rendered with a URL and CA bundle
// and applied, the webhook server runs in this process on 127.0.0.1 with a certificate made by the
// test, and people with client certificates create and edit Tenants. The API server calls our hooks
// and enforces their answers. The hooks are failurePolicy Fail, so they are narrowed with
// matchConditions to this run's Tenant names and always removed in afterAll.
import { mkdtemp, rm } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TenantWebhooks } from '../../constructs/platform/tenant-webhooks.ts';
import { requesterTenant } from '../../src/controller/controller.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { startWebhookServer, type WebhookServer } from '../../src/webhooks/server.ts';
import { WARN_LABEL_REVERTED, WARN_SERVICE_TENANT_LABEL } from '../../src/webhooks/tenant-mutation.ts';
import { COULD_NOT_FETCH_TENANT, DENY_MANAGER_EDIT, DENY_SELF_EDIT, notManagerOf } from '../../src/webhooks/tenant-validation.ts';
import { makeServingCert } from '../support/tls.ts';
import { labConfig, runController } from './controller-support.ts';
import { adminKubeConfig, deleteAll, getObject, kubeConfigFor, serverSideApply, waitFor, type KubeObject } from './cluster.ts';

const CL = 'crownlabs.polito.it';
const K = 'crownlabs.polito.it/operator-selector';
const sfx = Math.random().toString(36).slice(2, 7).replace(/[^a-z0-9]/g, 'x');
const P = `wh-${sfx}`;
const SHARD = P;
const UTILITIES = `${P}-utilities`;
const WS_A = `${P}-ws-a`;
const WS_C = `${P}-ws-c`;
const BYPASS_GROUP = `${P}:bypass`;
const names = { ada: `${P}-ada`, bea: `${P}-bea`, carol: `${P}-carol`, dave: `${P}-dave`, mallory: `${P}-mallory`, zed: `${P}-zed`, zoe: `${P}-zoe`, root: `${P}-root` };
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
const deniedBy = (hook: 'validate' | 'mutate', message: string) => `admission webhook "${hook}.tenant.crownlabs.polito.it" denied the request: ${message}`;

describe('docs/behaviour.md §6 Tenant admission webhooks, called by the real API server', () => {
  let tmp: string;
  let caPem: string;
  let server: WebhookServer | undefined;
  let webhookObjects: KubeObject[] = [];
  let rbac: KubeObject[] = [];
  const admin = () => adminKubeConfig();
  const kc: Record<string, KubeConfig> = {};

  beforeAll(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'wh-it-'));
    const certDir = path.join(tmp, 'certs');
    ({ caPem } = await makeServingCert(path.join(tmp, 'ca'), certDir));
    const client = new KubeClient(admin());
    server = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      certDir,
      targetLabel: { key: K, value: SHARD },
      baseWorkspaces: [UTILITIES],
      bypassGroups: ['system:masters', BYPASS_GROUP],
      getTenant: (name) => requesterTenant(client, undefined, name),
    });

    // RBAC: everyone in this test may read, create and edit Tenants; the webhooks do the rest.
    const users = [names.ada, names.carol, names.dave, names.mallory, names.root];
    rbac = [
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `${P}-tenants` }, rules: [{ apiGroups: [CL], resources: ['tenants'], verbs: ['get', 'list', 'create', 'update', 'patch'] }] },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `${P}-tenants` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${P}-tenants` },
        subjects: [...users.map((name) => ({ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name })), { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: BYPASS_GROUP }],
      },
    ];
    await serverSideApply(rbac);
    for (const u of [names.ada, names.carol, names.dave, names.mallory]) kc[u] = await kubeConfigFor(u, ['crownlabs:testers']);
    kc[names.root] = await kubeConfigFor(names.root, [BYPASS_GROUP]);

    // The construct as the platform chart renders it, pointed at our server; plus matchConditions
    // so that only this run's Tenants (and service-tenant) reach hooks that fail closed.
    const chart = new Chart(new App(), 'webhooks', { disableResourceNameHashes: true });
    new TenantWebhooks(chart, 'tenant-webhooks', {
      targetLabel: { key: K, value: SHARD },
      url: `https://127.0.0.1:${server.port}`,
      caBundle: Buffer.from(caPem).toString('base64'),
      namePrefix: `${P}-`,
    });
    const onlyOurs = `object.metadata.name.startsWith('${P}-') || object.metadata.name == '${SERVICE_TENANT}'`;
    webhookObjects = chart.toJson().map((o: any) => ({ ...o, webhooks: o.webhooks.map((w: any) => ({ ...w, matchConditions: [{ name: 'this-test-run', expression: onlyOurs }] })) }));
    await serverSideApply(webhookObjects);
    // The API server picks webhook configurations up asynchronously: wait until a dry-run create
    // comes back mutated.
    await waitFor(async () => {
      const r = await call(admin(), 'POST', `${TENANTS_PATH}?dryRun=All`, tenant(`${P}-probe`, []));
      return r.body?.metadata?.labels?.[K] === SHARD && r.body.spec.workspaces?.length === 1;
    }, { timeoutMs: 30_000 });

    // The people: carol manages ws-a and the base workspace and uses ws-c; dave uses ws-a.
    for (const t of [
      tenant(names.carol, [{ name: WS_A, role: 'manager' }, { name: UTILITIES, role: 'manager' }, { name: WS_C, role: 'user' }]),
      tenant(names.dave, [{ name: WS_A, role: 'user' }]),
      tenant(names.ada, [{ name: WS_A, role: 'user' }], { publicKeys: ['ssh-ed25519 AAAA old'], lastLogin: iso(Date.now() - 48 * HOUR) }),
      tenant(names.bea, [{ name: WS_A, role: 'user' }]),
    ]) {
      const r = await create(admin(), t);
      expect(r.code, JSON.stringify(r.body)).toBe(201);
    }
  });

  afterAll(async () => {
    try {
      if (webhookObjects.length) await deleteAll(webhookObjects);
    } finally {
      try {
        await deleteAll([...Object.values(names), SERVICE_TENANT].map((name) => ({ apiVersion: `${CL}/v1alpha2`, kind: 'Tenant', metadata: { name } })));
        await deleteAll(rbac);
      } finally {
        await server?.close();
        await rm(tmp, { recursive: true, force: true });
      }
    }
  });

  describe('§6.1 mutating', () => {
    it('a new Tenant gets the target label and the base workspaces (role user), its own entries kept', async () => {
      const ada = await get(names.ada);
      expect(ada.metadata.labels).toEqual({ [K]: SHARD });
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
      expect(changed.body.metadata.labels).toEqual({ [K]: SHARD, team: 'x' });
      const removed = await patch(kc[names.carol], names.bea, { metadata: { labels: { [K]: null } } });
      expect(removed.warnings).toEqual([WARN_LABEL_REVERTED]);
      expect((await get(names.bea)).metadata.labels).toEqual({ [K]: SHARD, team: 'x' });
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

    it('a Tenant outside the target shard is not validated (objectSelector on the target label)', async () => {
      // bea was moved to another shard by a bypass user above; anyone with RBAC may now edit her.
      await waitFor(async () => (await get(names.bea)).metadata.labels[K] === 'other-shard');
      const r = await patch(kc[names.dave], names.bea, { spec: { firstName: 'Free' } });
      expect(r.code, JSON.stringify(r.body)).toBe(200);
    });
  });

  describe('§2.1 the controller process serves the webhooks', () => {
    it('`startController` with webhook options answers on its webhook port, reading the requester from its cache', async () => {
      // A shard no object carries: the controller reconciles nothing, its caches still hold every Tenant.
      const { handle, requests } = await runController(labConfig(`${P}-none`, { baseWorkspaces: [UTILITIES] }), {
        webhook: (deps) => startWebhookServer({ port: 0, host: '127.0.0.1', certDir: path.join(tmp, 'certs'), bypassGroups: ['system:masters'], ...deps }),
      });
      try {
        const ada = await get(names.ada);
        const edited = { ...ada, spec: { ...ada.spec, workspaces: [{ name: WS_A, role: 'user' }] } };
        const body = JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          request: { uid: 'direct-1', name: names.ada, operation: 'UPDATE', userInfo: { username: names.carol }, object: edited, oldObject: ada },
        });
        const port = Number(handle.webhookAddress!.split(':').pop());
        const answer = await new Promise<any>((resolve, reject) => {
          const req = https.request({ host: '127.0.0.1', port, path: '/validate-v1alpha2-tenant', method: 'POST', ca: caPem, agent: false, headers: { 'Content-Type': 'application/json' } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
          });
          req.on('error', reject);
          req.end(body);
        });
        expect(answer.response).toEqual({ uid: 'direct-1', allowed: true, status: { code: 200 } });
        expect(requests.filter((r) => r.method === 'GET' && r.path.endsWith(`/tenants/${names.carol}`))).toEqual([]);
      } finally {
        await handle.stop();
      }
    });
  });
});
