// Which Instance names can be rendered (src/model/instance-names.ts): the limit and the reserved
// names are checked against what the composition really renders, so they cannot drift from it.
import { describe, expect, it } from 'vitest';
import { checkSetObjects } from '../../../src/compose/prewrite.ts';
import { renderSubmissionJob } from '../../../src/compose/submission.ts';
import type { Instance } from '../../../src/inputs/types.ts';
import { instanceNameProblem, MAX_INSTANCE_NAME_LENGTH, RESERVED_INSTANCE_NAMES, TENANT_NAMESPACE_NAMES } from '../../../src/model/instance-names.ts';
import { lab, render, testConfig } from '../../support/lab.ts';

const GUI_VM = { environmentType: 'VirtualMachine', guiEnabled: true, mode: 'Standard' };
const GUI_CONTAINER = { environmentType: 'Container', guiEnabled: true, mode: 'Standard', image: 'registry.example/desk:1' };
const perInstance = testConfig({ authMode: 'per-instance', oidcClientSecret: 's3cret' });
const named = (name: string, env: Record<string, unknown>) => render(lab({ env, instanceMeta: { name } }), perInstance);
const issuesOf = (name: string, env: Record<string, unknown>) => named(name, env).sets.flatMap((s) => checkSetObjects(s.objects).issues);
const submitter = (name: string) =>
  renderSubmissionJob({
    instance: { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: 'tenant-john-doe' }, spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: 'w' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'john.doe' } } } as Instance,
    envName: 'env',
    level: '2e8aeb9',
    destinationUrl: 'https://upload.example/x',
    config: testConfig(),
  });

describe('the longest Instance name', () => {
  it('is 50: every object rendered for a 50-character name passes the API server name and label rules, with the per-instance oauth2-proxy', () => {
    expect(MAX_INSTANCE_NAME_LENGTH).toBe(50);
    for (const env of [GUI_VM, GUI_CONTAINER]) {
      const name = 'a'.repeat(MAX_INSTANCE_NAME_LENGTH);
      expect(named(name, env).find('Service', `${name}-oauth2-proxy`)).toBeDefined();
      expect(issuesOf(name, env)).toEqual([]);
    }
    // The submission Job's name goes into a label of its pods: at most 63.
    expect(submitter('a'.repeat(MAX_INSTANCE_NAME_LENGTH)).metadata.name.length).toBeLessThanOrEqual(63);
  });

  it('is tight: one character more and the oauth2-proxy Service name is refused', () => {
    const name = 'a'.repeat(MAX_INSTANCE_NAME_LENGTH + 1);
    expect(issuesOf(name, GUI_VM).map((i) => `${i.object} ${i.field}`)).toContain(`Service/tenant-john-doe/${name}-oauth2-proxy metadata.name`);
  });

  it('longer names are refused with the reason and the length', () => {
    expect(instanceNameProblem('a'.repeat(50))).toBeUndefined();
    expect(instanceNameProblem('a'.repeat(64))).toBe(
      'an Instance name is at most 50 characters: names and label values derived from it (the Service "<name>-oauth2-proxy", the Job "<name>-submitter") are limited to 63 (this one has 64)',
    );
  });
});

describe('reserved Instance names', () => {
  const TENANT = JSON.stringify({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name: 'ann.x', labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
    spec: { firstName: 'A', lastName: 'X', email: 'a@example.com', createSandbox: true, workspaces: [] },
  });

  it("cover every object a Tenant's set renders in its personal namespace (with MyDrive share and sandbox)", () => {
    const r = render(TENANT);
    const inNamespace = r.objects.filter((o) => o.metadata.namespace === 'tenant-ann-x').map((o) => o.metadata.name);
    expect(inNamespace).toContain('mydrive-info');
    expect([...new Set(inNamespace)].sort()).toEqual([...TENANT_NAMESPACE_NAMES].sort());
    for (const name of TENANT_NAMESPACE_NAMES) expect(RESERVED_INSTANCE_NAMES).toContain(name);
  });

  it('are refused because an Instance so named takes the Secret mydrive-info of its namespace, also written with a dot', () => {
    for (const name of ['mydrive-info', 'mydrive.info']) {
      const secrets = named(name, GUI_VM).objects.filter((o) => o.kind === 'Secret' && o.metadata.name === 'mydrive-info' && o.metadata.namespace === 'tenant-john-doe');
      // The tenant's own and the Instance's cloud-init Secret.
      expect(secrets.map((o) => o.metadata.labels?.['crownlabs.polito.it/instance'])).toEqual([undefined, name]);
      expect(instanceNameProblem(name)).toBe(
        `"${name}" is reserved: one of the Instance's objects would take the name of an object of the tenant's namespace (crownlabs-resource-quota, crownlabs-manage-instances, crownlabs-deny-ingress-traffic, crownlabs-allow-trusted-ingress-traffic, mydrive-info)`,
      );
    }
    expect(instanceNameProblem('mydrive')).toBeUndefined();
    expect(instanceNameProblem('my-info')).toBeUndefined();
  });
});
