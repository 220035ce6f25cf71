// Who may make which change to a Tenant at API level e62be9e (docs/behaviour.md §16.4): every
// requester role × the changes whose decision the e62be9e rules decide (self-enrolment by
// autoEnroll, managers approving candidates, lastLogin checked whenever present, CREATE judged as
// someone else's edit, the personal workspace kept while its Templates have Instances), through the
// webhook server as the API server calls it (mutating hook, its patch applied, validating hook).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Instance, Tenant, TenantWorkspaceEntry, Workspace } from '../../../src/inputs/types.ts';
import type { Operation, UserInfo } from '../../../src/webhooks/admission.ts';
import { COULD_NOT_FETCH_TENANT, lastLoginOutOfRange } from '../../../src/webhooks/tenant-validation.ts';
import {
  E6_DENY_MANAGER_EDIT,
  E6_DENY_SELF_EDIT,
  E6_DENY_SELF_WORKSPACES,
  E6_PERSONAL_WORKSPACE_IN_USE,
  e6NotManagerOf,
} from '../../../src/webhooks/tenant-validation-e62be9e.ts';
import { startAdmissionChain, type AdmissionChain } from '../../support/tenant-admission-chain.ts';

const K = 'crownlabs.polito.it/operator-selector';
const NOW = Date.parse('2026-11-23T12:00:00Z');
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const CONTROLLER = 'system:serviceaccount:crownlabs-composer:crownlabs-controller';
const BASE = 'utilities';

const user = (name: string): TenantWorkspaceEntry => ({ name, role: 'user' });
const manager = (name: string): TenantWorkspaceEntry => ({ name, role: 'manager' });
const candidate = (name: string): TenantWorkspaceEntry => ({ name, role: 'candidate' });
function tenant(name: string, workspaces: TenantWorkspaceEntry[], spec: Partial<Tenant['spec']> = {}): Tenant {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name, labels: { [K]: 'prod' } },
    spec: { firstName: 'Ada', lastName: 'Lovelace', email: `${name}@example.com`, createSandbox: false, workspaces, ...spec },
  };
}

// ws-a: no autoEnroll; ws-imm: immediate; ws-appr: withApproval. carol manages ws-a, ws-appr and
// the base workspace; mike manages ws-b; dave is a user of ws-a; una is elsewhere.
const WORKSPACES: Record<string, Workspace['spec']['autoEnroll']> = { 'ws-a': '', 'ws-b': undefined, 'ws-imm': 'immediate', 'ws-appr': 'withApproval', [BASE]: '' };
const TENANTS: Record<string, Tenant> = {
  carol: tenant('carol', [manager('ws-a'), manager('ws-appr'), manager(BASE)]),
  mike: tenant('mike', [manager('ws-b'), user('ws-a'), user(BASE)]),
  dave: tenant('dave', [user('ws-a'), user(BASE)]),
  una: tenant('una', [user('ws-c'), user(BASE)]),
};

const REQUESTERS = {
  controller: { username: CONTROLLER, groups: ['system:serviceaccounts', 'system:authenticated'] },
  admin: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
  managerHere: { username: 'carol', groups: ['system:authenticated'] },
  managerElsewhere: { username: 'mike', groups: ['system:authenticated'] },
  member: { username: 'dave', groups: ['system:authenticated'] },
  self: { username: 'ada', groups: ['system:authenticated'] },
  unrelated: { username: 'una', groups: ['system:authenticated'] },
  anonymous: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
  serviceAccount: { username: 'system:serviceaccount:tenant-ada:default', groups: ['system:serviceaccounts', 'system:authenticated'] },
} satisfies Record<string, UserInfo>;
type Requester = keyof typeof REQUESTERS;
const COLUMNS = Object.keys(REQUESTERS) as Requester[];

/**
 * `ok`; `self` / `mgr` (the owner's / anyone else's spec-change denial); `own-ws` (a self-enrolment
 * the Workspace does not allow); `ws:<name>` (not a manager of it); `login`; `fetch` (the
 * requester has no Tenant: 404, the API server's code); `ws-fail` (500: a Workspace unreadable);
 * `busy` (409: personal Templates still have Instances).
 */
type Decision = 'ok' | 'self' | 'mgr' | 'own-ws' | 'login' | 'fetch' | 'ws-fail' | 'busy' | `ws:${string}`;

const PERSONAL = { cpu: 2, memory: '4Gi', instances: 2 };
// ada: a user of ws-a and the base workspace, logged in an hour ago, with a personal workspace.
const ADA: Tenant = {
  ...tenant('ada', [user('ws-a'), user(BASE)], { publicKeys: ['ssh-ed25519 AAAA ada'], lastLogin: iso(NOW - HOUR), personalWorkspace: PERSONAL }),
  status: { personalNamespace: { name: 'tenant-ada', created: true }, sandboxNamespace: { created: false }, ready: true },
};
const withSpec = (t: Tenant, spec: Partial<Tenant['spec']>): Tenant => ({ ...structuredClone(t), spec: { ...structuredClone(t.spec), ...spec } });
const withoutSpec = (t: Tenant, field: keyof Tenant['spec']): Tenant => {
  const copy = structuredClone(t);
  delete copy.spec[field];
  return copy;
};
const roles = (...ws: TenantWorkspaceEntry[]) => withSpec(ADA, { workspaces: [user('ws-a'), user(BASE), ...ws] });
const STALE = withSpec(ADA, { lastLogin: iso(NOW - 48 * HOUR) });

const instance = (templateNamespace: string): Instance =>
  ({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Instance',
    metadata: { name: 'i', namespace: 'tenant-ada' },
    spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: templateNamespace }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'ada' }, running: true },
  }) as Instance;

interface Change {
  what: string;
  operation: Operation;
  old?: Tenant;
  new: Tenant;
  /** Instances in ada's personal namespace. */
  instances?: Instance[];
  /** controller, admin, managerHere, managerElsewhere, member, self, unrelated, anonymous, serviceAccount */
  expect: [Decision, Decision, Decision, Decision, Decision, Decision, Decision, Decision, Decision];
}

const others = (ws: string): Decision => `ws:${ws}`;
const CHANGES: Change[] = [
  { what: 'no change', operation: 'UPDATE', old: ADA, new: ADA, expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  // Self-enrolment: immediate as user, withApproval as candidate; nothing else.
  { what: 'join ws-imm (immediate) as user', operation: 'UPDATE', old: ADA, new: roles(user('ws-imm')), expect: ['ok', 'ok', others('ws-imm'), others('ws-imm'), others('ws-imm'), 'ok', others('ws-imm'), 'fetch', 'fetch'] },
  { what: 'join ws-imm (immediate) as candidate', operation: 'UPDATE', old: ADA, new: roles(candidate('ws-imm')), expect: ['ok', 'ok', others('ws-imm'), others('ws-imm'), others('ws-imm'), 'own-ws', others('ws-imm'), 'fetch', 'fetch'] },
  { what: 'join ws-imm (immediate) as manager', operation: 'UPDATE', old: ADA, new: roles(manager('ws-imm')), expect: ['ok', 'ok', others('ws-imm'), others('ws-imm'), others('ws-imm'), 'own-ws', others('ws-imm'), 'fetch', 'fetch'] },
  { what: 'join ws-appr (withApproval) as candidate', operation: 'UPDATE', old: ADA, new: roles(candidate('ws-appr')), expect: ['ok', 'ok', 'ok', others('ws-appr'), others('ws-appr'), 'ok', others('ws-appr'), 'fetch', 'fetch'] },
  { what: 'join ws-appr (withApproval) as user', operation: 'UPDATE', old: ADA, new: roles(user('ws-appr')), expect: ['ok', 'ok', 'ok', others('ws-appr'), others('ws-appr'), 'own-ws', others('ws-appr'), 'fetch', 'fetch'] },
  { what: 'join ws-b (no autoEnroll field) as user', operation: 'UPDATE', old: ADA, new: roles(user('ws-b')), expect: ['ok', 'ok', others('ws-b'), 'ok', others('ws-b'), 'own-ws', others('ws-b'), 'fetch', 'fetch'] },
  { what: 'join a Workspace that cannot be read', operation: 'UPDATE', old: ADA, new: roles(user('ws-gone')), expect: ['ok', 'ok', others('ws-gone'), others('ws-gone'), others('ws-gone'), 'ws-fail', others('ws-gone'), 'fetch', 'fetch'] },
  // A manager approves (or a candidate promotes itself: refused).
  { what: 'approve a candidate of ws-appr', operation: 'UPDATE', old: roles(candidate('ws-appr')), new: roles(user('ws-appr')), expect: ['ok', 'ok', 'ok', others('ws-appr'), others('ws-appr'), 'own-ws', others('ws-appr'), 'fetch', 'fetch'] },
  { what: 'reject a candidate of ws-appr (remove it)', operation: 'UPDATE', old: roles(candidate('ws-appr')), new: ADA, expect: ['ok', 'ok', 'ok', others('ws-appr'), others('ws-appr'), 'ok', others('ws-appr'), 'fetch', 'fetch'] },
  // Leaving: allowed to the owner in autoEnroll Workspaces only.
  { what: 'leave ws-imm', operation: 'UPDATE', old: roles(user('ws-imm')), new: ADA, expect: ['ok', 'ok', others('ws-imm'), others('ws-imm'), others('ws-imm'), 'ok', others('ws-imm'), 'fetch', 'fetch'] },
  { what: 'leave ws-a (no autoEnroll)', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { workspaces: [user(BASE)] }), expect: ['ok', 'ok', 'ok', others('ws-a'), others('ws-a'), 'own-ws', others('ws-a'), 'fetch', 'fetch'] },
  // lastLogin: checked whenever present; absent is accepted.
  { what: 'replace the keys with a 48 h old login left as it is', operation: 'UPDATE', old: STALE, new: withSpec(STALE, { publicKeys: ['ssh-ed25519 AAAA new'] }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'login', 'mgr', 'fetch', 'fetch'] },
  { what: 'replace the keys and the login with now', operation: 'UPDATE', old: STALE, new: withSpec(STALE, { publicKeys: [], lastLogin: iso(NOW) }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'ok', 'mgr', 'fetch', 'fetch'] },
  { what: 'set lastLogin 25 h ahead', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastLogin: iso(NOW + 25 * HOUR) }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'login', 'mgr', 'fetch', 'fetch'] },
  { what: 'remove lastLogin', operation: 'UPDATE', old: ADA, new: withoutSpec(ADA, 'lastLogin'), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'ok', 'mgr', 'fetch', 'fetch'] },
  { what: 'rewrite lastLogin as the same instant with an offset', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastLogin: ADA.spec.lastLogin!.replace('Z', '+00:00') }), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  // Other fields.
  { what: 'change the first name', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { firstName: 'Augusta' }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'join ws-imm and change the first name', operation: 'UPDATE', old: ADA, new: withSpec(roles(user('ws-imm')), { firstName: 'Augusta' }), expect: ['ok', 'ok', others('ws-imm'), others('ws-imm'), others('ws-imm'), 'self', others('ws-imm'), 'fetch', 'fetch'] },
  { what: 'grow the personal workspace', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { personalWorkspace: { ...PERSONAL, cpu: 8 } }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  // The personal workspace: a bypass requester may disable it unless its Templates have Instances.
  { what: 'disable the personal workspace while one of its Templates has an Instance', operation: 'UPDATE', old: ADA, new: withoutSpec(ADA, 'personalWorkspace'), instances: [instance('workspace-ws-a'), instance('tenant-ada')], expect: ['busy', 'busy', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'disable the personal workspace while only other Templates have Instances', operation: 'UPDATE', old: ADA, new: withoutSpec(ADA, 'personalWorkspace'), instances: [instance('workspace-ws-a')], expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'enable the personal workspace', operation: 'UPDATE', old: withoutSpec(ADA, 'personalWorkspace'), new: ADA, instances: [instance('tenant-ada')], expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  // CREATE is judged as someone else's edit, the owner's too (ada has no Tenant yet). The base workspace is added first.
  { what: 'create a Tenant in ws-a', operation: 'CREATE', new: withSpec(ADA, { workspaces: [user('ws-a')] }), expect: ['ok', 'ok', 'ok', others(BASE), others(BASE), 'fetch', others(BASE), 'fetch', 'fetch'] },
  { what: 'create a candidate of ws-appr', operation: 'CREATE', new: withSpec(ADA, { workspaces: [candidate('ws-appr')] }), expect: ['ok', 'ok', 'ok', others(BASE), others(BASE), 'fetch', others(BASE), 'fetch', 'fetch'] },
];

function expected(d: Decision): { allowed: boolean; code?: number; message?: string | RegExp } {
  if (d === 'ok') return { allowed: true };
  if (d === 'self') return { allowed: false, code: 403, message: E6_DENY_SELF_EDIT };
  if (d === 'mgr') return { allowed: false, code: 403, message: E6_DENY_MANAGER_EDIT };
  if (d === 'own-ws') return { allowed: false, code: 403, message: E6_DENY_SELF_WORKSPACES };
  if (d === 'login') return { allowed: false, code: 403, message: lastLoginOutOfRange(NOW) };
  if (d === 'fetch') return { allowed: false, code: 404, message: new RegExp(`^${COULD_NOT_FETCH_TENANT}: `) };
  if (d === 'ws-fail') return { allowed: false, code: 500, message: /^failed to check workspace changes: failed to fetch workspace ws-gone: / };
  if (d === 'busy') return { allowed: false, code: 409, message: E6_PERSONAL_WORKSPACE_IN_USE };
  return { allowed: false, code: 403, message: e6NotManagerOf(d.slice('ws:'.length)) };
}

const notFound = (what: string, name: string) => Object.assign(new Error(`${what} "${name}" not found`), { code: 404 });

describe('docs/behaviour.md §16.4 Tenant webhooks at e62be9e: who may make which change', () => {
  let chain: AdmissionChain;
  let instances: Instance[] = [];
  beforeAll(async () => {
    chain = await startAdmissionChain({
      level: 'e62be9e',
      targetLabel: { key: K, value: 'prod' },
      baseWorkspaces: [BASE],
      bypassGroups: ['system:masters'],
      bypassUsers: [CONTROLLER],
      getTenant: async (name) => {
        const t = TENANTS[name];
        if (!t) throw notFound('tenants.crownlabs.polito.it', name);
        return structuredClone(t);
      },
      getWorkspace: async (name) => {
        if (!(name in WORKSPACES)) throw notFound('workspaces.crownlabs.polito.it', name);
        const autoEnroll = WORKSPACES[name];
        return { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name }, spec: { prettyName: name, quota: { cpu: 1, memory: '1Gi', instances: 1 }, ...(autoEnroll === undefined ? {} : { autoEnroll }) } };
      },
      listInstances: async (ns) => instances.filter((i) => i.metadata.namespace === ns),
      now: () => NOW,
    });
  });
  afterAll(() => chain?.close());

  for (const change of CHANGES) {
    describe(change.what, () => {
      COLUMNS.forEach((who, i) => {
        const decision = change.expect[i];
        it(`by ${who}: ${decision}`, async () => {
          instances = change.instances ?? [];
          const outcome = await chain.admit({ operation: change.operation, userInfo: REQUESTERS[who], object: structuredClone(change.new), oldObject: change.old && structuredClone(change.old) });
          const want = expected(decision);
          expect(outcome.allowed, JSON.stringify(outcome.validate ?? outcome.mutate)).toBe(want.allowed);
          if (want.allowed) return;
          expect(outcome.code).toBe(want.code);
          if (want.message instanceof RegExp) expect(outcome.message).toMatch(want.message);
          else expect(outcome.message).toBe(want.message);
        });
      });
    });
  }

  it('a server without a level keeps the 2e8aeb9 rules: the owner may not enrol itself even in an immediate Workspace', async () => {
    const old = await startAdmissionChain({ targetLabel: { key: K, value: 'prod' }, baseWorkspaces: [BASE], bypassGroups: [], getTenant: async () => structuredClone(ADA), now: () => NOW });
    try {
      const outcome = await old.admit({ operation: 'UPDATE', userInfo: REQUESTERS.self, object: roles(user('ws-imm')), oldObject: ADA });
      expect(outcome.allowed).toBe(false);
      expect(outcome.message).toBe('only changes to public keys are allowed in the owned tenant');
    } finally {
      await old.close();
    }
  });
});
