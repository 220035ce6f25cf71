// Who may make which change to a Tenant (docs/behaviour.md §6, docs/threat-model.md): every requester
// role × every kind of change, through the webhook server as the API server calls it (mutating hook,
// its patch applied, then validating hook). Deletions are not the webhooks' to judge: both hooks are
// registered for CREATE and UPDATE only (test/unit/constructs/tenant-webhooks.test.ts), so RBAC alone
// decides them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant, TenantWorkspaceEntry } from '../../../src/inputs/types.ts';
import type { Operation, UserInfo } from '../../../src/webhooks/admission.ts';
import { WARN_LABEL_REVERTED } from '../../../src/webhooks/tenant-mutation.ts';
import { COULD_NOT_FETCH_TENANT, DENY_MANAGER_EDIT, DENY_SELF_EDIT, lastLoginOutOfRange, notManagerOf } from '../../../src/webhooks/tenant-validation.ts';
import { startAdmissionChain, type AdmissionChain } from '../../support/tenant-admission-chain.ts';

const K = 'crownlabs.polito.it/operator-selector';
const NOW = Date.parse('2026-11-23T12:00:00Z');
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const CONTROLLER = 'system:serviceaccount:crownlabs-composer:crownlabs-controller';
const BASE = 'utilities';

const user = (name: string): TenantWorkspaceEntry => ({ name, role: 'user' });
const manager = (name: string): TenantWorkspaceEntry => ({ name, role: 'manager' });
function tenant(name: string, workspaces: TenantWorkspaceEntry[], spec: Partial<Tenant['spec']> = {}, labels: Record<string, string> = { [K]: 'prod' }): Tenant {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name, labels },
    spec: { firstName: 'Ada', lastName: 'Lovelace', email: `${name}@example.com`, createSandbox: false, workspaces, ...spec },
  };
}

// The requesters' own Tenants (what the server's lookup finds): carol manages ws-a (and the base
// workspace), mike manages ws-b and is a plain user of ws-a, dave is a plain user of ws-a, una is
// in an unrelated workspace.
const TENANTS: Record<string, Tenant> = {
  carol: tenant('carol', [manager('ws-a'), manager(BASE)]),
  mike: tenant('mike', [manager('ws-b'), user('ws-a'), user(BASE)]),
  dave: tenant('dave', [user('ws-a'), user(BASE)]),
  una: tenant('una', [user('ws-c'), user(BASE)]),
};

const REQUESTERS = {
  controller: { username: CONTROLLER, groups: ['system:serviceaccounts', 'system:serviceaccounts:crownlabs-composer', 'system:authenticated'] },
  admin: { username: 'kubernetes-admin', groups: ['system:masters', 'system:authenticated'] },
  managerHere: { username: 'carol', groups: ['system:authenticated'] },
  managerElsewhere: { username: 'mike', groups: ['system:authenticated'] },
  member: { username: 'dave', groups: ['system:authenticated'] },
  self: { username: 'ada', groups: ['system:authenticated'] },
  unrelated: { username: 'una', groups: ['system:authenticated'] },
  anonymous: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
  serviceAccount: { username: 'system:serviceaccount:tenant-ada:default', groups: ['system:serviceaccounts', 'system:serviceaccounts:tenant-ada', 'system:authenticated'] },
} satisfies Record<string, UserInfo>;
type Requester = keyof typeof REQUESTERS;
const COLUMNS = Object.keys(REQUESTERS) as Requester[];

/**
 * One expected decision: `ok`; `self` / `mgr` (the self-edit / manager-edit denial); `ws:<name>`
 * (not a manager of that workspace); `login` (lastLogin out of range); `fetch` (400: the requester
 * has no Tenant).
 */
type Decision = 'ok' | 'self' | 'mgr' | 'login' | 'fetch' | `ws:${string}`;

// The target: ada, a plain user of ws-a (and of the base workspace), with a key and a 48 h old login.
const ADA = tenant('ada', [user('ws-a'), user(BASE)], { publicKeys: ['ssh-ed25519 AAAA ada'], lastLogin: iso(NOW - 48 * HOUR) });
const withSpec = (t: Tenant, spec: Partial<Tenant['spec']>): Tenant => ({ ...structuredClone(t), spec: { ...structuredClone(t.spec), ...spec } });
const withLabels = (t: Tenant, labels: Record<string, string>): Tenant => ({ ...structuredClone(t), metadata: { ...t.metadata, labels } });
const withoutSpec = (t: Tenant, field: keyof Tenant['spec']): Tenant => {
  const copy = structuredClone(t);
  delete copy.spec[field];
  return copy;
};
const roles = (...ws: TenantWorkspaceEntry[]) => withSpec(ADA, { workspaces: ws });
/** A new Tenant as its creator sends it: a current lastLogin (a stale one would be the first thing the owner's check refuses). */
const created = (spec: Partial<Tenant['spec']>) => withSpec(ADA, { lastLogin: iso(NOW), ...spec });

interface Change {
  what: string;
  operation: Operation;
  old?: Tenant;
  new: Tenant;
  /** controller, admin, managerHere, managerElsewhere, member, self, unrelated, anonymous, serviceAccount */
  expect: [Decision, Decision, Decision, Decision, Decision, Decision, Decision, Decision, Decision];
  /** The stored target label: by default the old one (or the target value on CREATE). */
  label?: (who: Requester) => string | undefined;
  warned?: (who: Requester) => boolean;
}

const BYPASS = (who: Requester) => who === 'controller' || who === 'admin';
const CHANGES: Change[] = [
  { what: 'no change', operation: 'UPDATE', old: ADA, new: ADA, expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  // Enrolments in ws-a, which only carol manages.
  { what: 'enrol in ws-a as user', operation: 'UPDATE', old: roles(user(BASE)), new: roles(user(BASE), user('ws-a')), expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'remove a user from ws-a', operation: 'UPDATE', old: ADA, new: roles(user(BASE)), expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'promote to manager of ws-a', operation: 'UPDATE', old: ADA, new: roles(manager('ws-a'), user(BASE)), expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'demote from manager of ws-a', operation: 'UPDATE', old: roles(manager('ws-a'), user(BASE)), new: ADA, expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'enrol in ws-a as manager', operation: 'UPDATE', old: roles(user(BASE)), new: roles(user(BASE), manager('ws-a')), expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'remove a manager from ws-a', operation: 'UPDATE', old: roles(manager('ws-a'), user(BASE)), new: roles(user(BASE)), expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  { what: 'reorder the enrolments (no role changes)', operation: 'UPDATE', old: ADA, new: roles(user(BASE), user('ws-a')), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'self', 'ok', 'fetch', 'fetch'] },
  // ws-b is mike's.
  { what: 'enrol in ws-b as user', operation: 'UPDATE', old: ADA, new: roles(user('ws-a'), user(BASE), user('ws-b')), expect: ['ok', 'ok', 'ws:ws-b', 'ok', 'ws:ws-b', 'self', 'ws:ws-b', 'fetch', 'fetch'] },
  { what: 'promote in ws-b, where she is enrolled', operation: 'UPDATE', old: roles(user('ws-a'), user(BASE), user('ws-b')), new: roles(user('ws-a'), user(BASE), manager('ws-b')), expect: ['ok', 'ok', 'ws:ws-b', 'ok', 'ws:ws-b', 'self', 'ws:ws-b', 'fetch', 'fetch'] },
  {
    what: 'promote in ws-a and enrol in ws-b',
    operation: 'UPDATE',
    old: ADA,
    new: roles(manager('ws-a'), user(BASE), user('ws-b')),
    expect: ['ok', 'ok', 'ws:ws-b', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'],
  },
  { what: 'promote in ws-a and change the first name', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { workspaces: [manager('ws-a'), user(BASE)], firstName: 'Augusta' }), expect: ['ok', 'ok', 'mgr', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'] },
  // Her own fields.
  { what: 'replace the public keys', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { publicKeys: ['ssh-ed25519 AAAA new'] }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'ok', 'mgr', 'fetch', 'fetch'] },
  { what: 'remove every public key', operation: 'UPDATE', old: ADA, new: withoutSpec(ADA, 'publicKeys'), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'ok', 'mgr', 'fetch', 'fetch'] },
  { what: 'set lastLogin to now', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastLogin: iso(NOW) }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'ok', 'mgr', 'fetch', 'fetch'] },
  { what: 'rewrite lastLogin as the same instant with an offset', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastLogin: ADA.spec.lastLogin!.replace('Z', '+00:00') }), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  {
    what: 'promote in ws-a, lastLogin rewritten as the same instant',
    operation: 'UPDATE',
    old: ADA,
    new: withSpec(ADA, { workspaces: [manager('ws-a'), user(BASE)], lastLogin: ADA.spec.lastLogin!.replace('Z', '+00:00') }),
    expect: ['ok', 'ok', 'ok', 'ws:ws-a', 'ws:ws-a', 'self', 'ws:ws-a', 'fetch', 'fetch'],
  },
  { what: 'set lastLogin 25 h ahead', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastLogin: iso(NOW + 25 * HOUR) }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'login', 'mgr', 'fetch', 'fetch'] },
  { what: 'remove lastLogin', operation: 'UPDATE', old: ADA, new: withoutSpec(ADA, 'lastLogin'), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'login', 'mgr', 'fetch', 'fetch'] },
  { what: 'change the e-mail', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { email: 'ada@elsewhere.example' }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'change the first name', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { firstName: 'Augusta' }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'change the last name', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { lastName: 'King' }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'change the keys and the e-mail at once', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { publicKeys: [], email: 'x@example.com' }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  // Other protected fields.
  { what: 'turn the sandbox on', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { createSandbox: true }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  { what: 'set a quota', operation: 'UPDATE', old: ADA, new: withSpec(ADA, { quota: { cpu: '64', memory: '256Gi', instances: 50 } }), expect: ['ok', 'ok', 'mgr', 'mgr', 'mgr', 'self', 'mgr', 'fetch', 'fetch'] },
  // Labels: the target label is the mutating hook's (reverted unless a bypass requester sets a
  // non-empty value); the validating hook judges the spec only, RBAC decides who writes the rest.
  {
    what: 'change the target label',
    operation: 'UPDATE',
    old: ADA,
    new: withLabels(ADA, { [K]: 'elsewhere' }),
    expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'],
    label: (who) => (BYPASS(who) ? 'elsewhere' : 'prod'),
    warned: (who) => !BYPASS(who),
  },
  { what: 'remove the target label', operation: 'UPDATE', old: ADA, new: withLabels(ADA, {}), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'], warned: () => true },
  {
    what: 'label a Tenant without the target label with it',
    operation: 'UPDATE',
    old: withLabels(ADA, {}),
    new: ADA,
    expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'],
    label: (who) => (BYPASS(who) ? 'prod' : undefined),
    warned: (who) => !BYPASS(who),
  },
  { what: 'add another label', operation: 'UPDATE', old: ADA, new: withLabels(ADA, { [K]: 'prod', team: 'x' }), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  // The operator rewrites the workspace labels from the spec; nothing reads them as a role.
  { what: 'label herself manager of ws-b', operation: 'UPDATE', old: ADA, new: withLabels(ADA, { [K]: 'prod', 'crownlabs.polito.it/workspace-ws-b': 'manager' }), expect: ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'fetch', 'fetch'] },
  // Creation: the mutating hook adds the base workspace before validation, so a creator must manage it too.
  { what: 'create a Tenant in ws-a', operation: 'CREATE', new: created({ workspaces: [user('ws-a')] }), expect: ['ok', 'ok', 'ok', `ws:${BASE}`, `ws:${BASE}`, 'self', `ws:${BASE}`, 'fetch', 'fetch'] },
  { what: 'create a manager of ws-a with a sandbox', operation: 'CREATE', new: created({ workspaces: [manager('ws-a')], createSandbox: true }), expect: ['ok', 'ok', 'ok', `ws:${BASE}`, `ws:${BASE}`, 'self', `ws:${BASE}`, 'fetch', 'fetch'] },
  { what: 'create a Tenant in ws-b', operation: 'CREATE', new: created({ workspaces: [user('ws-b'), user(BASE)] }), expect: ['ok', 'ok', 'ws:ws-b', `ws:${BASE}`, `ws:${BASE}`, 'self', `ws:${BASE}`, 'fetch', 'fetch'] },
];

function expected(d: Decision): { allowed: boolean; code?: number; message?: string | RegExp } {
  if (d === 'ok') return { allowed: true };
  if (d === 'self') return { allowed: false, code: 403, message: DENY_SELF_EDIT };
  if (d === 'mgr') return { allowed: false, code: 403, message: DENY_MANAGER_EDIT };
  if (d === 'login') return { allowed: false, code: 403, message: lastLoginOutOfRange(NOW) };
  if (d === 'fetch') return { allowed: false, code: 400, message: new RegExp(`^${COULD_NOT_FETCH_TENANT}: `) };
  return { allowed: false, code: 403, message: notManagerOf(d.slice('ws:'.length)) };
}

describe('docs/behaviour.md §6 Tenant webhooks: who may make which change', () => {
  let chain: AdmissionChain;
  beforeAll(async () => {
    chain = await startAdmissionChain({
      targetLabel: { key: K, value: 'prod' },
      baseWorkspaces: [BASE],
      // As installed: only system:masters, and the controller by its user name.
      bypassGroups: ['system:masters'],
      bypassUsers: [CONTROLLER],
      getTenant: async (name) => {
        const t = name === 'ada' ? ADA : TENANTS[name];
        if (!t) throw new Error(`tenants.crownlabs.polito.it "${name}" not found`);
        return structuredClone(t);
      },
      now: () => NOW,
    });
  });
  afterAll(() => chain?.close());

  for (const change of CHANGES) {
    describe(change.what, () => {
      COLUMNS.forEach((who, i) => {
        const decision = change.expect[i];
        it(`by ${who}: ${decision}`, async () => {
          const outcome = await chain.admit({ operation: change.operation, userInfo: REQUESTERS[who], object: structuredClone(change.new), oldObject: change.old && structuredClone(change.old) });
          const want = expected(decision);
          expect(outcome.allowed, JSON.stringify(outcome.validate ?? outcome.mutate)).toBe(want.allowed);
          if (!want.allowed) {
            expect(outcome.code).toBe(want.code);
            if (want.message instanceof RegExp) expect(outcome.message).toMatch(want.message);
            else expect(outcome.message).toBe(want.message);
            return;
          }
          const label = change.label ? change.label(who) : change.operation === 'CREATE' ? 'prod' : change.old?.metadata.labels?.[K];
          expect(outcome.stored?.metadata.labels?.[K]).toBe(label);
          expect(outcome.warnings).toEqual(change.warned?.(who) ? [WARN_LABEL_REVERTED] : []);
          // The spec is stored as sent, the base workspace added when missing.
          const ws = change.new.spec.workspaces ?? [];
          expect(outcome.stored?.spec).toEqual({ ...change.new.spec, workspaces: ws.some((w) => w.name === BASE) ? ws : [...ws, user(BASE)] });
        });
      });
    });
  }
});
