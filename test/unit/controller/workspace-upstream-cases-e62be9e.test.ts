// Upstream's Workspace controller cases at e62be9e ("AutoEnrollment", "Tenant") restated as rows over
// the patches the Workspace reconciler writes (docs/behaviour.md §4.5, §16.4): its autoenroll label,
// the enrolment of each Tenant labelled in it, and the Tenants' entries when it is deleted.
import { describe, expect, it } from 'vitest';
import type { Tenant, TenantWorkspaceEntry, Workspace } from '../../../src/inputs/types.ts';
import { candidateEnrolmentPatch, workspaceAutoEnrollPatch, workspaceRemovalPatch } from '../../../src/controller/parent-patches.ts';

const WS = 'test-workspace';
const workspace = (autoEnroll?: Workspace['spec']['autoEnroll']) =>
  ({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: WS }, spec: { prettyName: 'Test Workspace', quota: { cpu: 1, memory: '1Gi', instances: 1 }, ...(autoEnroll === undefined ? {} : { autoEnroll }) } }) as Workspace;
const tenant = (name: string, role: TenantWorkspaceEntry['role']) =>
  ({
    metadata: { name, resourceVersion: '3', labels: { 'crownlabs.polito.it/operator-selector': 'test', [`crownlabs.polito.it/workspace-${WS}`]: role } },
    spec: { firstName: 'T', lastName: 'T', email: 't@test.email', workspaces: [{ name: WS, role }] },
  }) as unknown as Tenant;
const TENANTS = { 'test-candidate': tenant('test-candidate', 'candidate'), 'test-user': tenant('test-user', 'user'), 'test-manager': tenant('test-manager', 'manager') };

/** The Tenant's entries after the reconcile: the patch's list, or its own when nothing is patched. */
const entriesAfter = (t: Tenant, patch: { spec?: Record<string, unknown> } | undefined) => (patch?.spec?.workspaces as TenantWorkspaceEntry[] | undefined) ?? t.spec.workspaces;

describe('upstream workspace "AutoEnrollment"', () => {
  const rows: [autoEnroll: Workspace['spec']['autoEnroll'], label: string, after: Record<keyof typeof TENANTS, TenantWorkspaceEntry[]>][] = [
    [undefined, 'disabled', { 'test-candidate': [], 'test-user': [{ name: WS, role: 'user' }], 'test-manager': [{ name: WS, role: 'manager' }] }],
    ['', 'disabled', { 'test-candidate': [], 'test-user': [{ name: WS, role: 'user' }], 'test-manager': [{ name: WS, role: 'manager' }] }],
    ['immediate', 'immediate', { 'test-candidate': [{ name: WS, role: 'user' }], 'test-user': [{ name: WS, role: 'user' }], 'test-manager': [{ name: WS, role: 'manager' }] }],
    ['withApproval', 'withApproval', { 'test-candidate': [{ name: WS, role: 'candidate' }], 'test-user': [{ name: WS, role: 'user' }], 'test-manager': [{ name: WS, role: 'manager' }] }],
  ];
  for (const [autoEnroll, label, after] of rows) {
    it(`autoEnroll ${JSON.stringify(autoEnroll)}: labelled ${label}; the candidate's entry ${JSON.stringify(after['test-candidate'])}, users and managers untouched`, () => {
      expect(workspaceAutoEnrollPatch(workspace(autoEnroll), { 'crownlabs.polito.it/operator-selector': 'test' }, 'e62be9e')).toEqual({ metadata: { labels: { 'crownlabs.polito.it/autoenroll': label } } });
      for (const [name, t] of Object.entries(TENANTS)) {
        const patch = candidateEnrolmentPatch(t, workspace(autoEnroll));
        expect(entriesAfter(t, patch), name).toEqual(after[name as keyof typeof TENANTS]);
        // Written only when it changes, guarded by the version read.
        if (patch) expect(patch.metadata).toEqual({ resourceVersion: '3' });
      }
    });
  }
});

describe('upstream workspace "Tenant": a deleted Workspace leaves its Tenants', () => {
  for (const [name, t] of Object.entries(TENANTS)) {
    it(`${name}: its entry removed, guarded by the version read`, () => {
      expect(workspaceRemovalPatch(t, WS)).toEqual({ metadata: { resourceVersion: '3' }, spec: { workspaces: [] } });
    });
  }
  it('keeps the other entries, in order, and writes nothing to a Tenant without an entry', () => {
    const t = { metadata: { name: 'x', resourceVersion: '9' }, spec: { workspaces: [{ name: 'a', role: 'user' }, { name: WS, role: 'manager' }, { name: 'b', role: 'candidate' }] } } as unknown as Tenant;
    expect(workspaceRemovalPatch(t, WS)?.spec).toEqual({ workspaces: [{ name: 'a', role: 'user' }, { name: 'b', role: 'candidate' }] });
    expect(workspaceRemovalPatch(t, 'elsewhere')).toBeUndefined();
  });
});
