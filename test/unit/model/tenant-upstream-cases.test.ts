// Upstream's Tenant controller cases at e62be9e about what a Tenant is labelled, which of its
// workspaces fail, which Keycloak roles it must hold and what its personal workspace status says,
// restated as rows over the model (docs/behaviour.md §5.3, §5.6, §5.7, §16.4). Upstream's
// workspaces: ws1 (autoEnroll withApproval), ws2 (none), base-ws1 (a base workspace, none).
import { describe, expect, it } from 'vitest';
import type { Tenant, TenantWorkspaceEntry, Workspace } from '../../../src/inputs/types.ts';
import { enrolledWorkspaces, PERSONAL_WORKSPACE_FAILING, personalWorkspaceState, splitWorkspaces, tenantOwnLabels } from '../../../src/model/tenant-plan.ts';
import { wantedWorkspaceRoles } from '../../../src/integrations/keycloak/index.ts';

const KEY = 'crownlabs.polito.it/operator-selector';
const ws = (name: string, autoEnroll?: Workspace['spec']['autoEnroll']): Workspace =>
  ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name }, spec: { prettyName: name, quota: { cpu: 1, memory: '1Gi', instances: 1 }, ...(autoEnroll === undefined ? {} : { autoEnroll }) } }) as Workspace;
const WORKSPACES = new Map([ws('ws1', 'withApproval'), ws('ws2'), ws('base-ws1')].map((w) => [w.metadata.name, w]));
const BASE = { baseWorkspaces: ['base-ws1'] };

function tenant(workspaces: TenantWorkspaceEntry[], labels: Record<string, string> = {}, spec: Partial<Tenant['spec']> = {}): Tenant {
  return {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name: 'testuser', labels: { [KEY]: 'test', ...labels } },
    spec: { firstName: 'Test', lastName: 'Tenant', email: 'test@tenant.example', createSandbox: false, workspaces, ...spec },
  };
}

describe('upstream tenant "Labels"', () => {
  const labels = tenantOwnLabels(tenant([]), WORKSPACES, BASE);
  it('keeps the operator target label (the webhooks own it)', () => {
    expect(labels[KEY]).toBe('test');
  });
  it('labels the first and last names', () => {
    expect(labels).toMatchObject({ 'crownlabs.polito.it/first-name': 'Test', 'crownlabs.polito.it/last-name': 'Tenant' });
  });
});

describe('upstream tenant "Workspace management": workspace labels and failing workspaces', () => {
  const label = (w: string) => `crownlabs.polito.it/workspace-${w}`;
  const rows: [what: string, entries: TenantWorkspaceEntry[], current: Record<string, string>, want: { labels: Record<string, string | undefined>; failing: string[]; noWorkspaces: boolean }][] = [
    ['a manager of ws1', [{ name: 'ws1', role: 'manager' }], {}, { labels: { [label('ws1')]: 'manager' }, failing: [], noWorkspaces: false }],
    ['a user of ws1', [{ name: 'ws1', role: 'user' }], {}, { labels: { [label('ws1')]: 'user' }, failing: [], noWorkspaces: false }],
    ['a candidate of ws1 (withApproval)', [{ name: 'ws1', role: 'candidate' }], {}, { labels: { [label('ws1')]: 'candidate' }, failing: [], noWorkspaces: false }],
    ['a candidate of ws2 (no autoEnroll)', [{ name: 'ws2', role: 'candidate' }], {}, { labels: { [label('ws2')]: undefined }, failing: ['ws2'], noWorkspaces: true }],
    ['a manager of ws3, which does not exist', [{ name: 'ws3', role: 'manager' }], {}, { labels: { [label('ws3')]: undefined }, failing: ['ws3'], noWorkspaces: true }],
    ['no entry, but a stale ws1 label', [], { [label('ws1')]: 'manager' }, { labels: { [label('ws1')]: undefined }, failing: [], noWorkspaces: true }],
    ['no workspaces', [], {}, { labels: {}, failing: [], noWorkspaces: true }],
    ['only the base workspace', [{ name: 'base-ws1', role: 'manager' }], {}, { labels: { [label('base-ws1')]: 'manager' }, failing: [], noWorkspaces: true }],
  ];
  for (const [what, entries, current, want] of rows) {
    it(`${what}: ${JSON.stringify(want.labels)}, failing ${JSON.stringify(want.failing)}, no-workspaces ${want.noWorkspaces}`, () => {
      const t = tenant(entries, current);
      const labels = tenantOwnLabels(t, WORKSPACES, BASE);
      for (const [k, v] of Object.entries(want.labels)) expect(labels[k], k).toBe(v);
      expect(labels['crownlabs.polito.it/no-workspaces']).toBe(want.noWorkspaces ? 'true' : undefined);
      expect(splitWorkspaces(t, WORKSPACES).failing).toEqual(want.failing);
    });
  }
});

describe('upstream tenant "Authorization": the Keycloak roles a Tenant must hold', () => {
  // The roles to add and remove given the user's current ones: test/unit/keycloak/tenant-roles-upstream-cases.test.ts.
  const rows: [what: string, entries: TenantWorkspaceEntry[], roles: string[]][] = [
    ['no workspaces', [], []],
    ['a manager of ws1 and a user of ws2', [{ name: 'ws1', role: 'manager' }, { name: 'ws2', role: 'user' }], ['workspace-ws1:manager', 'workspace-ws2:user']],
    ['a user of ws1 and a manager of ws2', [{ name: 'ws1', role: 'user' }, { name: 'ws2', role: 'manager' }], ['workspace-ws1:user', 'workspace-ws2:manager']],
    ['a user of a workspace that does not exist', [{ name: 'invalid-ws', role: 'user' }], []],
    ['a candidate of ws1 (withApproval: labelled, not yet a member)', [{ name: 'ws1', role: 'candidate' }], []],
  ];
  for (const [what, entries, roles] of rows) {
    it(`${what}: ${JSON.stringify(roles)}`, () => {
      expect(wantedWorkspaceRoles(enrolledWorkspaces(splitWorkspaces(tenant(entries), WORKSPACES).existing))).toEqual(roles);
    });
  }
});

describe('upstream tenant "Personal workspace handling": status', () => {
  const PERSONAL = { cpu: 4, memory: '8Gi', instances: 2 };
  const rows: [what: string, personal: boolean, namespaceLive: boolean, bindingLive: boolean, created: boolean, failing: boolean][] = [
    ['enabled, namespace live, binding applied: created', true, true, true, true, false],
    ['enabled, namespace live, binding not applied: failing', true, true, false, false, true],
    ['disabled, namespace live: not created, not failing', false, true, false, false, false],
    ['enabled, no namespace: not created, not failing', true, false, false, false, false],
    ['disabled, no namespace: not created, not failing', false, false, false, false, false],
  ];
  for (const [what, personal, namespaceLive, bindingLive, created, failing] of rows) {
    it(what, () => {
      const t = tenant([], {}, personal ? { personalWorkspace: PERSONAL } : {});
      expect(personalWorkspaceState(t, namespaceLive, bindingLive)).toEqual({ created, failing });
    });
  }
  it(`the failing entry is named ${PERSONAL_WORKSPACE_FAILING}`, () => {
    expect(PERSONAL_WORKSPACE_FAILING).toBe('personal-workspace');
  });
});
