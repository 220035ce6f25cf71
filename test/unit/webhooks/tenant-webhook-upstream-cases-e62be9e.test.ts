// Upstream's Tenant webhook cases at e62be9e (the defaulter and the validator) restated as rows over
// our hooks at API level e62be9e (docs/behaviour.md §6.1, §16.4): a request in, the decision (and
// for the mutating hook the object it leaves) out. Upstream's fixtures: the manager some-manager
// manages test-workspace; some-fake-manager manages nothing; the Workspaces test-workspace-
// withApproval, -noAutoenroll and -immediate; the bypass group "admins".
import fastJsonPatch from 'fast-json-patch';
import { describe, expect, it } from 'vitest';
import type { Instance, Tenant, TenantWorkspaceEntry, Workspace } from '../../../src/inputs/types.ts';
import type { AdmissionRequest, AdmissionResponse, Operation, UserInfo } from '../../../src/webhooks/admission.ts';
import { mutateTenant, SERVICE_TENANT, type TenantWebhookConfig } from '../../../src/webhooks/tenant-mutation.ts';
import { changedWorkspaces, validateTenant } from '../../../src/webhooks/tenant-validation.ts';
import { E6_DENY_MANAGER_EDIT, E6_DENY_SELF_EDIT, E6_DENY_SELF_WORKSPACES, e6NotManagerOf } from '../../../src/webhooks/tenant-validation-e62be9e.ts';

const NOW = Date.parse('2026-08-01T12:00:00Z');
const HOUR = 3600_000;
const TOLERANCE = 24 * HOUR;
const at = (ms: number) => new Date(ms).toISOString();

function tenant(name: string, spec: Partial<Tenant['spec']> = {}, labels?: Record<string, string>, status?: Tenant['status']): Tenant {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: spec as Tenant['spec'],
    ...(status ? { status } : {}),
  };
}
let uid = 0;
const request = (operation: Operation, object: unknown, oldObject: unknown, userInfo: UserInfo = {}): AdmissionRequest => ({
  uid: String(++uid),
  operation,
  name: (object as Tenant | undefined)?.metadata?.name ?? '',
  userInfo,
  ...(object !== undefined ? { object } : {}),
  ...(oldObject !== undefined ? { oldObject } : {}),
});

describe('upstream "Defaulter webhook": the operator selector label and the base workspaces', () => {
  const KEY = 'crownlabs.polito.it/op-sel';
  const config = (baseWorkspaces: string[] = []): TenantWebhookConfig => ({ level: 'e62be9e', targetLabel: { key: KEY, value: 'test' }, baseWorkspaces, bypassGroups: ['system:serviceaccounts:default'] });
  const mutated = (r: AdmissionRequest, response: AdmissionResponse): Tenant => {
    if (!response.patch) return r.object as Tenant;
    const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
    return fastJsonPatch.applyPatch(structuredClone(r.object), patch, true, false).newDocument as Tenant;
  };
  const withLabels = (name: string, labels?: Record<string, string>) => tenant(name, {}, labels);

  const labelRows: [what: string, operation: Operation, object: Tenant, old: Tenant | undefined, groups: string[], labels: Record<string, string>][] = [
    ['CREATE of a Tenant without labels: the label set', 'CREATE', withLabels('test-tenant'), undefined, [], { [KEY]: 'test' }],
    ['CREATE of the service tenant labelled: the label blanked', 'CREATE', withLabels(SERVICE_TENANT, { [KEY]: 'something-not-nil' }), undefined, [], { [KEY]: '' }],
    ['CREATE by an administrator with the right label: the labels as sent', 'CREATE', withLabels('test-tenant', { test1: 'test', [KEY]: 'test' }), undefined, ['admins'], { test1: 'test', [KEY]: 'test' }],
    ['CREATE with a wrong label: the label set', 'CREATE', withLabels('test-tenant', { [KEY]: 'something-not-nil' }), undefined, [], { [KEY]: 'test' }],
    ['CREATE with the right label: kept', 'CREATE', withLabels('test-tenant', { [KEY]: 'test' }), undefined, [], { [KEY]: 'test' }],
    ['UPDATE changing the label: reverted', 'UPDATE', withLabels('test-tenant', { [KEY]: 'new-value' }), withLabels('test-tenant', { [KEY]: 'old-value' }), [], { [KEY]: 'old-value' }],
    ['UPDATE adding a label the Tenant had not: removed', 'UPDATE', withLabels('test-tenant', { [KEY]: 'test' }), withLabels('test-tenant'), [], {}],
    ['UPDATE keeping a custom label: kept', 'UPDATE', withLabels('test-tenant', { [KEY]: 'customtest' }), withLabels('test-tenant', { [KEY]: 'customtest' }), [], { [KEY]: 'customtest' }],
    ['UPDATE setting the right value over a custom one: the custom one kept', 'UPDATE', withLabels('test-tenant', { [KEY]: 'test' }), withLabels('test-tenant', { [KEY]: 'customtest' }), [], { [KEY]: 'customtest' }],
  ];
  for (const [what, operation, object, old, groups, labels] of labelRows) {
    it(what, () => {
      const r = request(operation, object, old, { username: 'someone', groups });
      const response = mutateTenant(r, config());
      expect(response.allowed).toBe(true);
      expect(mutated(r, response).metadata.labels ?? {}).toEqual(labels);
    });
  }

  it('UPDATE without an old object, or of an object that is not a Tenant: refused as malformed (400)', () => {
    expect(mutateTenant(request('UPDATE', withLabels('test-tenant'), undefined), config()).status).toMatchObject({ code: 400 });
    expect(mutateTenant(request('CREATE', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }, undefined), config()).status).toMatchObject({ code: 400 });
  });

  const ws = (name: string, role: TenantWorkspaceEntry['role']): TenantWorkspaceEntry => ({ name, role });
  const baseRows: [what: string, workspaces: TenantWorkspaceEntry[] | undefined, after: TenantWorkspaceEntry[]][] = [
    ['no workspaces: the base one added as user', undefined, [ws('utilities', 'user')]],
    ['another workspace: the base one appended as user', [ws('workspace', 'manager')], [ws('workspace', 'manager'), ws('utilities', 'user')]],
    ['the base one already there, as manager: unchanged', [ws('workspace', 'manager'), ws('utilities', 'manager')], [ws('workspace', 'manager'), ws('utilities', 'manager')]],
  ];
  for (const [what, workspaces, after] of baseRows) {
    it(`base workspaces: ${what}`, () => {
      const r = request('CREATE', tenant(SERVICE_TENANT, workspaces ? { workspaces } : {}), undefined);
      expect(mutated(r, mutateTenant(r, config(['utilities']))).spec.workspaces).toEqual(after);
    });
  }
});

describe('upstream "Validator webhook"', () => {
  const WA = 'test-workspace-withApproval';
  const NA = 'test-workspace-noAutoenroll';
  const IM = 'test-workspace-immediate';
  const MANAGED = 'test-workspace';
  const PERSONAL = { cpu: 4, memory: '8Gi', instances: 2 };
  const PERSONAL_NS = 'tenant-test-tenant';
  const workspace = (name: string, autoEnroll?: Workspace['spec']['autoEnroll']): Workspace =>
    ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name }, spec: { prettyName: 'test-workspace', quota: { cpu: 1, memory: '1Gi', instances: 1 }, ...(autoEnroll ? { autoEnroll } : {}) } }) as Workspace;
  const WORKSPACES = new Map([workspace(WA, 'withApproval'), workspace(NA), workspace(IM, 'immediate')].map((w) => [w.metadata.name, w]));
  const TENANTS = new Map([tenant('some-manager', { workspaces: [{ name: MANAGED, role: 'manager' }] }), tenant('some-fake-manager')].map((t) => [t.metadata.name, t]));
  const notFound = (what: string, name: string) => Object.assign(new Error(`${what} "${name}" not found`), { code: 404, body: { kind: 'Status', reason: 'NotFound', code: 404 } });
  const instance = (templateNamespace: string) =>
    ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'test-instance', namespace: PERSONAL_NS }, spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'test-template', namespace: templateNamespace } } }) as unknown as Instance;

  interface Lab {
    instances?: Instance[];
    /** The Instance listing fails. */
    listFails?: boolean;
  }
  const validate = (r: AdmissionRequest, lab: Lab = {}) =>
    validateTenant(r, { level: 'e62be9e', bypassGroups: ['admins'] }, {
      now: () => NOW,
      getTenant: async (name) => {
        const t = TENANTS.get(name);
        if (!t) throw notFound('tenants.crownlabs.polito.it', name);
        return structuredClone(t);
      },
      getWorkspace: async (name) => {
        const w = WORKSPACES.get(name);
        if (!w) throw notFound('workspaces.crownlabs.polito.it', name);
        return structuredClone(w);
      },
      listInstances: async () => {
        if (lab.listFails) throw new Error('error listing instances');
        return lab.instances ?? [];
      },
    });

  /** `ok`, or the code and, for a 403, the message of the refusal. */
  type Want = 'ok' | { code: number; message?: string };
  const check = (response: AdmissionResponse, want: Want) => {
    if (want === 'ok') return expect(response.allowed, JSON.stringify(response.status)).toBe(true);
    expect(response.allowed).toBe(false);
    expect(response.status?.code).toBe(want.code);
    expect(response.status?.message).toBeTruthy();
    // Upstream's API errors carry a reason; so does every refusal but a malformed request's (400).
    if (want.code !== 400) expect(response.status?.reason).toBeTruthy();
    if (want.message) expect(response.status?.message).toBe(want.message);
  };

  describe('requests as the API server sends them', () => {
    const named = (spec: Partial<Tenant['spec']> = {}) => tenant('test-tenant', spec);
    const rows: [what: string, r: () => AdmissionRequest, want: Want][] = [
      ['CREATE by an administrator: allowed', () => request('CREATE', named(), undefined, { username: 'admin', groups: ['admins'] }), 'ok'],
      ['CREATE without an object: 400', () => request('CREATE', undefined, undefined, { username: 'some-manager' }), { code: 400 }],
      ['UPDATE without the old object: 400', () => request('UPDATE', named(), undefined, { username: 'some-manager' }), { code: 400 }],
      ['UPDATE by a user without a Tenant: 404', () => request('UPDATE', named(), named(), { username: 'invalid-manager' }), { code: 404 }],
      ['UPDATE by a non-manager enrolling someone: 403', () => request('UPDATE', named({ workspaces: [{ name: MANAGED, role: 'user' }] }), named(), { username: 'some-fake-manager', groups: ['other-group'] }), { code: 403, message: e6NotManagerOf(MANAGED) }],
    ];
    for (const [what, r, want] of rows) it(what, async () => check(await validate(r()), want));
  });

  describe("the owner's own edit", () => {
    const own = (spec: Partial<Tenant['spec']>) => tenant('test-tenant', spec);
    const self = (next: Tenant, old: Tenant) => validate(request('UPDATE', next, old, { username: 'test-tenant' }));
    const enrol = (name: string, role: TenantWorkspaceEntry['role']) => own({ workspaces: [{ name, role }] });
    const refusedEnrolment: Want = { code: 403, message: E6_DENY_SELF_WORKSPACES };
    const rows: [what: string, next: Tenant, old: Tenant, want: Want][] = [
      ['only the public keys changed: allowed', own({ publicKeys: ['other-key'] }), own({ publicKeys: ['some-key'] }), 'ok'],
      ['lastLogin set within the tolerance (now + 12 h): allowed', own({ lastLogin: at(NOW + TOLERANCE / 2) }), own({}), 'ok'],
      ['lastLogin set past the tolerance (now + 24 h + 1 ms): 403', own({ lastLogin: at(NOW + TOLERANCE + 1) }), own({}), { code: 403 }],
      ['joining a Workspace without autoEnroll as user: 403', enrol(NA, 'user'), own({}), refusedEnrolment],
      ['joining a Workspace without autoEnroll as candidate: 403', enrol(NA, 'candidate'), own({}), refusedEnrolment],
      ['joining a withApproval Workspace as user: 403', enrol(WA, 'user'), own({}), refusedEnrolment],
      ['joining a withApproval Workspace as candidate: allowed', enrol(WA, 'candidate'), own({}), 'ok'],
      ['joining an immediate Workspace as user: allowed', enrol(IM, 'user'), own({}), 'ok'],
      ['joining an immediate Workspace as candidate: 403', enrol(IM, 'candidate'), own({}), refusedEnrolment],
      ['another field changed: 403', own({ email: 'other' }), own({ lastName: 'test' }), { code: 403, message: E6_DENY_SELF_EDIT }],
      ['enabling the personal workspace: 403', own({ personalWorkspace: PERSONAL }), own({}), { code: 403, message: E6_DENY_SELF_EDIT }],
      ['disabling the personal workspace: 403', own({}), own({ personalWorkspace: PERSONAL }), { code: 403, message: E6_DENY_SELF_EDIT }],
    ];
    for (const [what, next, old, want] of rows) it(what, async () => check(await self(next, old), want));
  });

  describe("a manager's edit (some-manager manages test-workspace)", () => {
    const other = (spec: Partial<Tenant['spec']>) => tenant('test-tenant', spec);
    const enrolled = (name: string) => other({ workspaces: [{ name, role: 'user' }] });
    const rows: [what: string, operation: Operation, next: Tenant, old: Tenant | undefined, want: Want][] = [
      ['adding a workspace it manages: allowed', 'UPDATE', enrolled(MANAGED), other({}), 'ok'],
      ['removing a workspace it manages: allowed', 'UPDATE', other({}), enrolled(MANAGED), 'ok'],
      ['adding a workspace it does not manage: 403', 'UPDATE', enrolled('invalid-workspace'), other({}), { code: 403, message: e6NotManagerOf('invalid-workspace') }],
      ['removing a workspace it does not manage: 403', 'UPDATE', other({}), enrolled('invalid-workspace'), { code: 403, message: e6NotManagerOf('invalid-workspace') }],
      ['another field changed: 403', 'UPDATE', other({ email: 'other' }), other({ lastName: 'test' }), { code: 403, message: E6_DENY_MANAGER_EDIT }],
      ['creating a Tenant, any field set: allowed', 'CREATE', other({ email: 'other' }), undefined, 'ok'],
      ['enabling the personal workspace: 403', 'UPDATE', other({ personalWorkspace: PERSONAL }), other({}), { code: 403, message: E6_DENY_MANAGER_EDIT }],
      ['disabling the personal workspace: 403', 'UPDATE', other({}), other({ personalWorkspace: PERSONAL }), { code: 403, message: E6_DENY_MANAGER_EDIT }],
    ];
    for (const [what, operation, next, old, want] of rows) it(what, async () => check(await validate(request(operation, next, old, { username: 'some-manager' })), want));
  });

  describe('which workspaces count as changed', () => {
    const entries = (...e: [string, TenantWorkspaceEntry['role']][]) => tenant('t', { workspaces: e.map(([name, role]) => ({ name, role })) });
    const rows: [what: string, a: Tenant, b: Tenant, changed: string[]][] = [
      ['the same entries: none', entries(['test-a', 'manager']), entries(['test-a', 'manager']), []],
      ['one more in the first: it', entries(['test-a', 'manager']), entries(), ['test-a']],
      ['one more in the second: it', entries(['test-a', 'manager']), entries(['test-a', 'manager'], ['test-b', 'user']), ['test-b']],
      ['another role: it', entries(['test-a', 'user']), entries(['test-a', 'manager']), ['test-a']],
    ];
    for (const [what, a, b, changed] of rows) it(what, () => expect(changedWorkspaces(a, b)).toEqual(changed));
  });

  describe('an administrator switching the personal workspace', () => {
    const created = { personalNamespace: { name: PERSONAL_NS, created: true }, sandboxNamespace: { created: false }, ready: true };
    const withPersonal = (status?: Tenant['status']) => tenant('test-tenant', { personalWorkspace: PERSONAL }, undefined, status);
    const without = (status?: Tenant['status']) => tenant('test-tenant', {}, undefined, status);
    const failing = { ...created, failingWorkspaces: ['personal-workspace'], personalWorkspaceCreated: false };
    const rows: [what: string, next: Tenant, old: Tenant, lab: Lab, want: Want][] = [
      ['enabling it: allowed', withPersonal(), without(), {}, 'ok'],
      ['keeping it enabled: allowed', withPersonal(), withPersonal(), {}, 'ok'],
      ['keeping it disabled: allowed', without(), without(), {}, 'ok'],
      ['disabling it while an Instance runs one of its Templates: 409', without(created), withPersonal(created), { instances: [instance(PERSONAL_NS)] }, { code: 409 }],
      ['disabling it while an Instance runs one of its Templates, the personal workspace failing: 409', without(failing), withPersonal(failing), { instances: [instance(PERSONAL_NS)] }, { code: 409 }],
      ['disabling it with no Instances: allowed', without(created), withPersonal(created), {}, 'ok'],
      ['disabling it when the Instances cannot be listed: 500', without(created), withPersonal(created), { listFails: true }, { code: 500 }],
    ];
    for (const [what, next, old, lab, want] of rows) it(what, async () => check(await validate(request('UPDATE', next, old, { username: 'admin', groups: ['admins'] }), lab), want));
  });
});
