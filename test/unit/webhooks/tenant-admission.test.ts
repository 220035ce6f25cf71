import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { Tenant } from '../../../src/inputs/types.ts';
import type { AdmissionRequest, AdmissionResponse, Operation } from '../../../src/webhooks/admission.ts';
import {
  mutateTenant,
  SERVICE_TENANT,
  WARN_LABEL_REVERTED,
  WARN_SERVICE_TENANT_LABEL,
  type TenantWebhookConfig,
} from '../../../src/webhooks/tenant-mutation.ts';
import {
  COULD_NOT_FETCH_TENANT,
  DENY_MANAGER_EDIT,
  DENY_SELF_EDIT,
  lastLoginOutOfRange,
  notManagerOf,
  validateTenant,
} from '../../../src/webhooks/tenant-validation.ts';

const K = 'crownlabs.polito.it/operator-selector';
const config: TenantWebhookConfig = {
  targetLabel: { key: K, value: 'production' },
  baseWorkspaces: ['utilities'],
  bypassGroups: ['system:masters', 'kubernetes:admin'],
};
const NOW = Date.parse('2026-11-23T12:00:00Z');
const HOUR = 3600_000;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

type Ws = { name: string; role: 'manager' | 'user' };
function tenant(name: string, spec: Partial<Tenant['spec']> = {}, labels?: Record<string, string>): Tenant {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', createSandbox: false, ...spec },
  };
}
function request(op: Operation, object: Tenant, oldObject: Tenant | undefined, username: string, groups: string[] = []): AdmissionRequest {
  return {
    uid: 'uid-1',
    name: object.metadata.name,
    operation: op,
    userInfo: { username, groups: ['system:authenticated', ...groups] },
    object: structuredClone(object),
    ...(oldObject ? { oldObject: structuredClone(oldObject) } : {}),
  };
}
/** The object the API server persists after applying the response's patch. */
function patched(req: AdmissionRequest, res: AdmissionResponse): Tenant {
  expect(res.allowed).toBe(true);
  if (!res.patch) return req.object as Tenant;
  expect(res.patchType).toBe('JSONPatch');
  const ops = JSON.parse(Buffer.from(res.patch, 'base64').toString('utf8'));
  return fastJsonPatch.applyPatch(structuredClone(req.object), ops, true, false).newDocument as Tenant;
}

describe('docs/behaviour.md §6.1 mutating webhook: the target label', () => {
  const cases: {
    name: string;
    req: AdmissionRequest;
    labels: Record<string, string> | undefined;
    warnings?: string[];
  }[] = [
    {
      name: 'a CREATE gets the target label',
      req: request('CREATE', tenant('ada'), undefined, 'ada'),
      labels: { [K]: 'production' },
    },
    {
      name: 'a CREATE with another value is overwritten with the target value',
      req: request('CREATE', tenant('ada', {}, { [K]: 'other', keep: 'me' }), undefined, 'bob'),
      labels: { [K]: 'production', keep: 'me' },
    },
    {
      name: 'a bypass user keeps the non-empty value it chose on CREATE',
      req: request('CREATE', tenant('ada', {}, { [K]: 'staging' }), undefined, 'admin', ['system:masters']),
      labels: { [K]: 'staging' },
    },
    {
      name: 'a bypass user without the label still gets it on CREATE',
      req: request('CREATE', tenant('ada'), undefined, 'admin', ['system:masters']),
      labels: { [K]: 'production' },
    },
    {
      name: 'an UPDATE changing the label has it restored, with a warning',
      req: request('UPDATE', tenant('ada', {}, { [K]: 'other' }), tenant('ada', {}, { [K]: 'production' }), 'bob'),
      labels: { [K]: 'production' },
      warnings: [WARN_LABEL_REVERTED],
    },
    {
      name: 'an UPDATE removing the label has it restored, with a warning',
      req: request('UPDATE', tenant('ada', {}, { x: 'y' }), tenant('ada', {}, { [K]: 'production', x: 'y' }), 'bob'),
      labels: { [K]: 'production', x: 'y' },
      warnings: [WARN_LABEL_REVERTED],
    },
    {
      name: 'an UPDATE adding the label to a Tenant that had none has it deleted, with a warning',
      req: request('UPDATE', tenant('ada', {}, { [K]: 'production' }), tenant('ada'), 'bob'),
      labels: {},
      warnings: [WARN_LABEL_REVERTED],
    },
    {
      name: 'an UPDATE keeping the label changes nothing',
      req: request('UPDATE', tenant('ada', {}, { [K]: 'production', x: 'new' }), tenant('ada', {}, { [K]: 'production' }), 'bob'),
      labels: { [K]: 'production', x: 'new' },
    },
    {
      name: 'a bypass user may change the label on UPDATE',
      req: request('UPDATE', tenant('ada', {}, { [K]: 'staging' }), tenant('ada', {}, { [K]: 'production' }), 'admin', ['kubernetes:admin']),
      labels: { [K]: 'staging' },
    },
    {
      name: 'a bypass user removing the label still has it restored (only a non-empty value bypasses)',
      req: request('UPDATE', tenant('ada'), tenant('ada', {}, { [K]: 'production' }), 'admin', ['system:masters']),
      labels: { [K]: 'production' },
      warnings: [WARN_LABEL_REVERTED],
    },
    {
      name: 'service-tenant has a non-empty label blanked, with a warning',
      req: request('CREATE', tenant(SERVICE_TENANT, {}, { [K]: 'production' }), undefined, 'admin', ['system:masters']),
      labels: { [K]: '' },
      warnings: [WARN_SERVICE_TENANT_LABEL],
    },
    {
      name: 'service-tenant without the label is left alone (no label added on CREATE)',
      req: request('CREATE', tenant(SERVICE_TENANT), undefined, 'bob'),
      labels: undefined,
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const res = mutateTenant(c.req, { ...config, baseWorkspaces: [] });
      expect(res.uid).toBe('uid-1');
      expect(patched(c.req, res).metadata.labels).toEqual(c.labels);
      expect(res.warnings).toEqual(c.warnings);
    });
  }

  it('no change → no patch at all', () => {
    const req = request('UPDATE', tenant('ada', {}, { [K]: 'production' }), tenant('ada', {}, { [K]: 'production' }), 'bob');
    const res = mutateTenant(req, { ...config, baseWorkspaces: [] });
    expect(res).toEqual({ uid: 'uid-1', allowed: true, status: { code: 200 } });
  });

  it('the patch is a minimal JSON patch between the request object and the mutated one', () => {
    const req = request('CREATE', tenant('ada', { workspaces: [{ name: 'ws', role: 'manager' }] }, { a: 'b' }), undefined, 'bob');
    const res = mutateTenant(req, config);
    expect(JSON.parse(Buffer.from(res.patch!, 'base64').toString())).toEqual([
      { op: 'add', path: '/spec/workspaces/1', value: { name: 'utilities', role: 'user' } },
      { op: 'add', path: '/metadata/labels/crownlabs.polito.it~1operator-selector', value: 'production' },
    ]);
  });

  it('a malformed object is answered with 400, not a crash', () => {
    for (const object of [undefined, 'text', [1], { metadata: 3 }, { metadata: { name: 'a', labels: { x: 1 } } }, { metadata: { name: 'a' }, spec: { workspaces: 'ws' } }]) {
      const res = mutateTenant({ uid: 'u', name: 'a', operation: 'CREATE', userInfo: {}, object }, config);
      expect(res.allowed).toBe(false);
      expect(res.status?.code).toBe(400);
      expect(res.status?.message).toMatch(/object/);
    }
  });

  it('an UPDATE whose old object is unreadable is a malformed request: 400 (upstream answers 500)', () => {
    const res = mutateTenant({ ...request('UPDATE', tenant('ada'), undefined, 'bob') }, config);
    expect(res).toMatchObject({ allowed: false, status: { code: 400, message: 'oldObject is empty' } });
  });
  it('an object that is not a Tenant is 400', () => {
    for (const object of [{ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a' } }, { apiVersion: 'other.example/v1', kind: 'Tenant', metadata: { name: 'a' } }, { kind: 'Tenant', metadata: { name: 7 } }]) {
      const res = mutateTenant({ uid: 'u', name: 'a', operation: 'CREATE', userInfo: {}, object }, config);
      expect(res, JSON.stringify(object)).toMatchObject({ allowed: false, status: { code: 400 } });
    }
  });
});

describe('docs/behaviour.md §6.1 mutating webhook: base workspaces', () => {
  const run = (spec: Partial<Tenant['spec']>, name = 'ada') => {
    const req = request('CREATE', tenant(name, spec), undefined, 'ada');
    return patched(req, mutateTenant(req, { ...config, baseWorkspaces: ['utilities', 'common'] })).spec.workspaces;
  };
  it('appends each missing base workspace with role user', () => {
    expect(run({})).toEqual([
      { name: 'utilities', role: 'user' },
      { name: 'common', role: 'user' },
    ]);
    expect(run({ workspaces: [{ name: 'ws', role: 'manager' }] })).toEqual([
      { name: 'ws', role: 'manager' },
      { name: 'utilities', role: 'user' },
      { name: 'common', role: 'user' },
    ]);
  });
  it('keeps an existing entry (and its role) for a base workspace', () => {
    expect(run({ workspaces: [{ name: 'utilities', role: 'manager' }] })).toEqual([
      { name: 'utilities', role: 'manager' },
      { name: 'common', role: 'user' },
    ]);
  });
  it('applies to service-tenant too', () => {
    expect(run({}, SERVICE_TENANT)).toEqual([
      { name: 'utilities', role: 'user' },
      { name: 'common', role: 'user' },
    ]);
  });
  it('applies on UPDATE and to bypass users too', () => {
    const old = tenant('ada', {}, { [K]: 'production' });
    const req = request('UPDATE', old, old, 'admin', ['system:masters']);
    expect(patched(req, mutateTenant(req, config)).spec.workspaces).toEqual([{ name: 'utilities', role: 'user' }]);
  });
});

describe('docs/behaviour.md §6.2 validating webhook', () => {
  const managerOf = (...ws: string[]): Ws[] => ws.map((name) => ({ name, role: 'manager' }));
  const tenants: Record<string, Tenant> = {
    carol: tenant('carol', { workspaces: [...managerOf('ws-a', 'ws-b'), { name: 'ws-c', role: 'user' }] }),
    dave: tenant('dave', { workspaces: [{ name: 'ws-a', role: 'user' }] }),
  };
  const deps = {
    now: () => NOW,
    getTenant: async (name: string) => {
      const t = tenants[name];
      if (!t) throw new Error(`tenants.crownlabs.polito.it "${name}" not found`);
      return t;
    },
  };
  const base = tenant('ada', { workspaces: [{ name: 'ws-a', role: 'user' }], publicKeys: ['ssh-ed25519 AAAA old'], lastLogin: iso(NOW - 48 * HOUR) });
  const edit = (spec: Partial<Tenant['spec']>) => tenant('ada', { ...base.spec, ...spec });

  const cases: { name: string; req: AdmissionRequest; allowed: boolean; code?: number; message?: string }[] = [
    // 1. bypass
    { name: 'a bypass group member may change anything', req: request('UPDATE', edit({ firstName: 'X', workspaces: [] }), base, 'eve', ['system:masters']), allowed: true },
    { name: 'a bypass group member may create any Tenant', req: request('CREATE', base, undefined, 'eve', ['kubernetes:admin']), allowed: true },
    // 3. self edit
    { name: 'self: changing public keys is allowed', req: request('UPDATE', edit({ publicKeys: ['ssh-ed25519 AAAA new'] }), base, 'ada'), allowed: true },
    { name: 'self: removing every public key is allowed', req: request('UPDATE', edit({ publicKeys: undefined }), base, 'ada'), allowed: true },
    { name: 'self: lastLogin set to now is allowed', req: request('UPDATE', edit({ lastLogin: iso(NOW) }), base, 'ada'), allowed: true },
    { name: 'self: lastLogin 23h ahead is allowed', req: request('UPDATE', edit({ lastLogin: iso(NOW + 23 * HOUR) }), base, 'ada'), allowed: true },
    { name: 'self: lastLogin 23h ago is allowed', req: request('UPDATE', edit({ lastLogin: iso(NOW - 23 * HOUR) }), base, 'ada'), allowed: true },
    { name: 'self: lastLogin 25h ahead is denied', req: request('UPDATE', edit({ lastLogin: iso(NOW + 25 * HOUR) }), base, 'ada'), allowed: false, code: 403, message: lastLoginOutOfRange(NOW) },
    { name: 'self: lastLogin 25h ago is denied', req: request('UPDATE', edit({ lastLogin: iso(NOW - 25 * HOUR) }), base, 'ada'), allowed: false, code: 403, message: lastLoginOutOfRange(NOW) },
    { name: 'self: removing lastLogin is denied (zero time is out of range)', req: request('UPDATE', edit({ lastLogin: undefined }), base, 'ada'), allowed: false, message: lastLoginOutOfRange(NOW) },
    { name: 'self: an unchanged old lastLogin is fine although it is 48h old', req: request('UPDATE', edit({ publicKeys: [] }), base, 'ada'), allowed: true },
    { name: 'self: the same instant written differently is no change', req: request('UPDATE', edit({ lastLogin: base.spec.lastLogin!.replace('Z', '+00:00') }), base, 'ada'), allowed: true },
    { name: 'self: changing the first name is denied', req: request('UPDATE', edit({ firstName: 'Augusta' }), base, 'ada'), allowed: false, code: 403, message: DENY_SELF_EDIT },
    { name: 'self: enrolling in a workspace is denied', req: request('UPDATE', edit({ workspaces: [...base.spec.workspaces!, { name: 'ws-b', role: 'user' }] }), base, 'ada'), allowed: false, message: DENY_SELF_EDIT },
    { name: 'self: turning on the sandbox is denied', req: request('UPDATE', edit({ createSandbox: true }), base, 'ada'), allowed: false, message: DENY_SELF_EDIT },
    { name: 'self: lastLogin in range plus another change is denied', req: request('UPDATE', edit({ lastLogin: iso(NOW), email: 'x@example.com' }), base, 'ada'), allowed: false, message: DENY_SELF_EDIT },
    { name: 'self: an explicit createSandbox=false equals an absent one', req: request('UPDATE', (() => { const t = edit({}); delete (t.spec as Partial<Tenant['spec']>).createSandbox; return t; })(), base, 'ada'), allowed: true },
    { name: 'self-create with a full spec is denied', req: request('CREATE', edit({ lastLogin: iso(NOW) }), undefined, 'ada'), allowed: false, message: DENY_SELF_EDIT },
    { name: 'self-create with only publicKeys and a current lastLogin is allowed', req: request('CREATE', { ...base, spec: { publicKeys: ['k'], lastLogin: iso(NOW) } as Tenant['spec'] }, undefined, 'ada'), allowed: true },
    { name: 'self-create with a stale lastLogin is denied', req: request('CREATE', { ...base, spec: { lastLogin: iso(NOW - 30 * HOUR) } as Tenant['spec'] }, undefined, 'ada'), allowed: false, message: lastLoginOutOfRange(NOW) },
    // 4. manager edit
    { name: 'manager: enrolling in a managed workspace is allowed', req: request('UPDATE', edit({ workspaces: [...base.spec.workspaces!, { name: 'ws-b', role: 'user' }] }), base, 'carol'), allowed: true },
    { name: 'manager: promoting in a managed workspace is allowed', req: request('UPDATE', edit({ workspaces: [{ name: 'ws-a', role: 'manager' }] }), base, 'carol'), allowed: true },
    { name: 'manager: removing from a managed workspace is allowed', req: request('UPDATE', edit({ workspaces: [] }), base, 'carol'), allowed: true },
    { name: 'manager: enrolling in a workspace they only use is denied', req: request('UPDATE', edit({ workspaces: [...base.spec.workspaces!, { name: 'ws-c', role: 'user' }] }), base, 'carol'), allowed: false, code: 403, message: notManagerOf('ws-c') },
    { name: 'manager: enrolling in a workspace they are not in is denied', req: request('UPDATE', edit({ workspaces: [...base.spec.workspaces!, { name: 'ws-z', role: 'user' }] }), base, 'carol'), allowed: false, message: notManagerOf('ws-z') },
    { name: 'a plain user of the workspace may not change its enrolments', req: request('UPDATE', edit({ workspaces: [] }), base, 'dave'), allowed: false, message: notManagerOf('ws-a') },
    { name: 'manager: a workspace change plus a name change is denied', req: request('UPDATE', edit({ workspaces: [], lastName: 'B' }), base, 'carol'), allowed: false, message: DENY_MANAGER_EDIT },
    { name: 'manager: a public key change on another Tenant is denied', req: request('UPDATE', edit({ publicKeys: ['k'] }), base, 'carol'), allowed: false, message: DENY_MANAGER_EDIT },
    { name: 'manager: creating a Tenant in managed workspaces is allowed (other fields free on CREATE)', req: request('CREATE', tenant('zed', { workspaces: managerOf('ws-a'), createSandbox: true }), undefined, 'carol'), allowed: true },
    { name: 'manager: creating a Tenant in an unmanaged workspace is denied', req: request('CREATE', tenant('zed', { workspaces: [{ name: 'ws-c', role: 'user' }] }), undefined, 'carol'), allowed: false, message: notManagerOf('ws-c') },
    { name: 'a requester without a Tenant gets 400', req: request('UPDATE', edit({ workspaces: [] }), base, 'mallory'), allowed: false, code: 400, message: `${COULD_NOT_FETCH_TENANT}: tenants.crownlabs.polito.it "mallory" not found` },
    { name: 'a requester without a Tenant gets 400 even for a no-op', req: request('UPDATE', base, base, 'mallory'), allowed: false, code: 400 },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const res = await validateTenant(c.req, config, deps);
      expect(res.uid).toBe('uid-1');
      expect(res.allowed).toBe(c.allowed);
      if (c.code) expect(res.status?.code).toBe(c.code);
      if (c.message) expect(res.status?.message).toBe(c.message);
      expect(res.patch).toBeUndefined();
    });
  }

  it('the denial messages are upstream\'s', () => {
    expect(notManagerOf('ws-a')).toBe('you are not a manager for workspace <ws-a>');
    expect(lastLoginOutOfRange(NOW)).toBe('unacceptable last login time, must be within +/-24h0m0s since local server time: 2026-11-23T12:00:00.000Z');
  });

  it('a malformed new object is 400; a missing old object is 400 except on CREATE', async () => {
    expect((await validateTenant({ uid: 'u', name: 'ada', operation: 'CREATE', userInfo: { username: 'x' }, object: 'nope' }, config, deps)).status?.code).toBe(400);
    expect((await validateTenant({ uid: 'u', name: 'ada', operation: 'UPDATE', userInfo: { username: 'ada' }, object: base }, config, deps)).status).toEqual({
      code: 400,
      message: 'oldObject is empty',
    });
  });
});

describe('docs/behaviour.md §6 the controller\'s own requests', () => {
  const CONTROLLER = 'system:serviceaccount:crownlabs-composer:crownlabs-controller';
  const withController = { ...config, bypassUsers: [CONTROLLER] };
  const before = tenant('ada', { workspaces: [{ name: 'w', role: 'user' }] }, { [K]: 'production' });
  const after = { ...before, metadata: { ...before.metadata, finalizers: ['crownlabs.polito.it/tenant-operator'], labels: { [K]: 'production', 'crownlabs.polito.it/workspace-w': 'user' } }, spec: { ...before.spec, firstName: 'Changed' } };

  it('skip validation when they come from the controller\'s user, and only then', async () => {
    const deps = { getTenant: () => Promise.reject(new Error('404')), now: () => NOW };
    expect((await validateTenant(request('UPDATE', after, before, CONTROLLER, ['system:serviceaccounts']), withController, deps)).allowed).toBe(true);
    const other = await validateTenant(request('UPDATE', after, before, 'system:serviceaccount:tenant-ada:default', ['system:serviceaccounts']), withController, deps);
    expect(other.allowed).toBe(false);
    expect((await validateTenant(request('UPDATE', after, before, CONTROLLER, ['system:serviceaccounts']), config, deps)).allowed).toBe(false);
  });

  it('keep a target label the controller writes, as a bypass group member\'s', () => {
    const moved = { ...before, metadata: { ...before.metadata, labels: { [K]: 'staging' } } };
    expect(patched(request('UPDATE', moved, before, CONTROLLER), mutateTenant(request('UPDATE', moved, before, CONTROLLER), withController)).metadata.labels).toEqual({ [K]: 'staging' });
  });
});
