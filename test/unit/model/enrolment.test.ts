// An Instance renders only when the Tenant it names is enrolled (user or manager) in the workspace
// of its Template (docs/behaviour.md §7.2 step 4): the same decision for every sink, made in compose.
import { describe, expect, it } from 'vitest';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { enrolmentProblem, isEnrolled } from '../../../src/model/enrolment.ts';
import type { Template, Tenant } from '../../../src/inputs/types.ts';
import { inventoryFrom, lab, testConfig } from '../../support/lab.ts';

const tenantWith = (workspaces: { name: string; role: string }[]) =>
  ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: 'john.doe' }, spec: { firstName: 'J', lastName: 'D', email: 'j@x.org', workspaces } }) as unknown as Tenant;
const template = (workspace?: string) =>
  ({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Template',
    metadata: { name: 'tmpl', namespace: 'workspace-tea' },
    spec: { ...(workspace ? { 'workspace.crownlabs.polito.it/WorkspaceRef': { name: workspace } } : {}), environmentList: [] },
  }) as unknown as Template;

/** The lab with john.doe's workspace entries replaced. */
const labWithEntries = (workspaces: unknown[]) =>
  lab({ env: { environmentType: 'Container' } }).replace('"workspaces":[{"name":"tea","role":"user"}]', `"workspaces":${JSON.stringify(workspaces)}`);

describe('enrolment in the Template\'s workspace', () => {
  it('counts a user and a manager of the workspace, nothing else', () => {
    expect(isEnrolled(tenantWith([{ name: 'tea', role: 'user' }]), 'tea')).toBe(true);
    expect(isEnrolled(tenantWith([{ name: 'tea', role: 'manager' }]), 'tea')).toBe(true);
    expect(isEnrolled(tenantWith([{ name: 'coffee', role: 'manager' }]), 'tea')).toBe(false);
    expect(isEnrolled(tenantWith([]), 'tea')).toBe(false);
    expect(enrolmentProblem(tenantWith([{ name: 'tea', role: 'user' }]), template('tea'))).toBeUndefined();
    expect(enrolmentProblem(tenantWith([{ name: 'coffee', role: 'user' }]), template('tea'))).toBe(
      'Tenant john.doe is not enrolled in workspace tea of Template workspace-tea/tmpl: nothing is rendered for this Instance',
    );
    expect(enrolmentProblem(tenantWith([{ name: 'tea', role: 'user' }]), template())).toMatch(/names no workspace/);
  });

  it('an Instance of a Template of a workspace its Tenant is not in renders nothing, with an error on the Instance', () => {
    const inventory = inventoryFrom(labWithEntries([{ name: 'coffee', role: 'user' }]));
    const composition = compose(inventory, testConfig());
    expect(composition.units.map((u) => u.parent.kind)).not.toContain('Instance');
    expect(composition.problems).toEqual([
      expect.objectContaining({
        severity: 'error',
        kind: 'Instance',
        name: 'tenant-john-doe/inst.one',
        field: 'spec["tenant.crownlabs.polito.it/TenantRef"]',
        message: 'Tenant john.doe is not enrolled in workspace tea of Template workspace-tea/tmpl: nothing is rendered for this Instance',
      }),
    ]);
    // Its Tenant's set is still rendered.
    expect(renderAll(composition).some((s) => s.unit.parent.kind === 'Tenant' && s.unit.parent.name === 'john.doe')).toBe(true);
  });

  it('renders the Instance once the Tenant is enrolled, as user or as manager', () => {
    for (const role of ['user', 'manager']) {
      const composition = compose(inventoryFrom(labWithEntries([{ name: 'tea', role }])), testConfig());
      expect(composition.problems).toEqual([]);
      expect(composition.units.filter((u) => u.parent.kind === 'Instance').map((u) => u.parent.name)).toEqual(['inst.one']);
    }
  });
});
