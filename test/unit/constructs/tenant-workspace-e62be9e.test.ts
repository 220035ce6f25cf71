// Tenants and Workspaces at API level e62be9e (docs/behaviour.md §16.4): the ResourceSpec quota,
// the personal workspace, candidates. Facts as upstream's tenant controller tests state them.
import { describe, expect, it } from 'vitest';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import type { KubeObject, Tenant, Workspace } from '../../../src/inputs/types.ts';
import { enrolledWorkspaces, splitWorkspaces, tenantOwnLabels, tenantQuota } from '../../../src/model/tenant-plan.ts';
import { personalNamespaceKeepAlive } from '../../../src/controller/reconcile-tenant.ts';
import { testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };
const LEVEL = 'e62be9e' as const;

const ws = (name: string, quota: Record<string, unknown>, autoEnroll?: string) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name, labels: TARGET }, spec: { prettyName: name, quota, ...(autoEnroll !== undefined ? { autoEnroll } : {}) } });
const tn = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name, labels: TARGET }, spec: { firstName: 'John', lastName: 'Doe', email: 'j@example.com', ...spec } });

function read(docs: string[]) {
  const parsed = parseInputText(docs.join('\n---\n'), 'test.yaml', LEVEL);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, LEVEL);
  return { inventory, problems: [...parsed.problems, ...problems] };
}

function renderE6(docs: string[], config = testConfig({ apiLevel: LEVEL })) {
  const { inventory, problems } = read(docs);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`bad test input: ${JSON.stringify(errors)}`);
  const objects: KubeObject[] = renderAll(compose(inventory, config)).flatMap((s) => s.objects);
  const get = (kind: string, name: string, namespace?: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
  return { objects, get, problems };
}

const hard = (r: ReturnType<typeof renderE6>, tenant = 'tenant-john-doe') => (r.get('ResourceQuota', 'crownlabs-resource-quota', tenant) as Any)?.spec.hard;

describe('§16.4 the tenant ResourceQuota at e62be9e', () => {
  it('sums workspaces and the personal workspace, with requests.storage and each other resource under its own key', () => {
    const r = renderE6([
      ws('tea', { cpu: 8, memory: '15Gi', disk: '10Gi', instances: 3, otherResources: { 'nvidia.com/gpu': '1' } }),
      ws('coffee', { cpu: 10, memory: '25Gi', disk: '5Gi', instances: 5, otherResources: { 'nvidia.com/gpu': 2, 'amd.com/gpu': '1' } }),
      tn('john.doe', { workspaces: [{ name: 'tea', role: 'user' }, { name: 'coffee', role: 'manager' }], personalWorkspace: { cpu: 2, memory: '4Gi', disk: '1Gi', instances: 1 } }),
    ], testConfig({ apiLevel: LEVEL, capCpu: '100', capMemory: '500G', capInstances: 100 }));
    expect(hard(r)).toEqual({
      'limits.cpu': '20',
      'requests.cpu': '20',
      'limits.memory': '44Gi',
      'requests.memory': '44Gi',
      'count/instances.crownlabs.polito.it': '9',
      'requests.storage': '16Gi',
      'nvidia.com/gpu': '3',
      'amd.com/gpu': '1',
    });
  });

  it('renders requests.storage 0 when no workspace gives disk, as upstream', () => {
    const r = renderE6([ws('tea', { cpu: 1, memory: '1Gi', instances: 1 }), tn('john.doe', { workspaces: [{ name: 'tea', role: 'user' }] })]);
    expect(hard(r)['requests.storage']).toBe('0');
  });

  const caps = [
    { what: 'sums below the caps stay', caps: { capCpu: '25', capMemory: '50G', capInstances: 10 }, want: ['18', '40Gi', '8'] },
    { what: 'sums at or above the caps are capped', caps: { capCpu: '10', capMemory: '20G', capInstances: 4 }, want: ['10', '20G', '4'] },
    { what: 'a zero cap disables that cap', caps: { capCpu: '0', capMemory: '0', capInstances: 0 }, want: ['18', '40Gi', '8'] },
  ];
  for (const c of caps) {
    it(`caps cpu, memory and instances only: ${c.what}`, () => {
      const r = renderE6([
        ws('tea', { cpu: 8, memory: '15Gi', disk: '100Gi', instances: 3 }),
        ws('coffee', { cpu: 10, memory: '25Gi', instances: 5 }),
        tn('john.doe', { workspaces: [{ name: 'tea', role: 'user' }, { name: 'coffee', role: 'user' }] }),
      ], testConfig({ apiLevel: LEVEL, ...c.caps }));
      const h = hard(r);
      expect([h['limits.cpu'], h['limits.memory'], h['count/instances.crownlabs.polito.it']]).toEqual(c.want);
      expect(h['requests.storage']).toBe('100Gi');
    });
  }

  it('counts no candidate workspace, and no personal workspace when absent', () => {
    const r = renderE6([
      ws('tea', { cpu: 8, memory: '15Gi', instances: 3 }, 'withApproval'),
      ws('coffee', { cpu: 10, memory: '25Gi', instances: 5 }),
      tn('john.doe', { workspaces: [{ name: 'tea', role: 'candidate' }, { name: 'coffee', role: 'user' }] }),
    ]);
    expect(hard(r)['limits.cpu']).toBe('10');
    expect(hard(r)['count/instances.crownlabs.polito.it']).toBe('5');
  });

  it('2e8aeb9 keeps spec.quota verbatim and renders neither storage nor other keys', () => {
    const tenant = { spec: { quota: { cpu: '3', memory: '4Gi', instances: 2 } } } as unknown as Tenant;
    expect(tenantQuota(tenant, [], testConfig())).toEqual({ cpu: '3', memory: '4Gi', instances: 2 });
  });
});

describe('§16.4 string cpu (objects stored before cpu became an integer)', () => {
  const cases: [unknown, number][] = [
    ['8', 8],
    ['8000m', 8],
    ['1500m', 1],
    [' 12 ', 12],
  ];
  for (const [cpu, cores] of cases) {
    it(`reads Workspace cpu ${JSON.stringify(cpu)} as ${cores} cores, with a warning`, () => {
      const { inventory, problems } = read([ws('tea', { cpu, memory: '1Gi', instances: 1 })]);
      expect(inventory.workspaces.get('tea')!.spec.quota.cpu).toBe(cores);
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatchObject({ severity: 'warning', field: 'spec.quota.cpu' });
      expect(problems[0].message).toContain('the API server refuses it');
    });
  }
  it('reads "500m" as 0 cores (under the schema minimum) without refusing the object', () => {
    const { inventory, problems } = read([tn('john.doe', { personalWorkspace: { cpu: '500m', memory: '1Gi', instances: 1 } })]);
    expect(inventory.tenants.get('john.doe')!.spec.personalWorkspace!.cpu).toBe(0);
    expect(problems.map((p) => p.severity)).toEqual(['warning']);
  });
  it('refuses a cpu text the decoder cannot read, and an integer cpu under 1', () => {
    expect(read([ws('tea', { cpu: '2.5', memory: '1Gi', instances: 1 })]).problems.some((p) => p.severity === 'error' && p.field === 'spec.quota.cpu')).toBe(true);
    expect(read([ws('tea', { cpu: 0, memory: '1Gi', instances: 1 })]).problems.some((p) => p.severity === 'error' && p.field === 'spec.quota.cpu')).toBe(true);
  });
  it('leaves 2e8aeb9 cpu quantities as they are', () => {
    const parsed = parseInputText(ws('tea', { cpu: '500m', memory: '1Gi', instances: 1 }), 'test.yaml');
    expect(parsed.problems).toEqual([]);
    expect((parsed.objects[0].object as Workspace).spec.quota.cpu).toBe('500m');
  });
});

describe('§16.4 candidates and the personal workspace', () => {
  const workspaces = new Map<string, Workspace>(
    (['withApproval', 'immediate', ''] as const).map((a) => [a || 'none', { metadata: { name: a || 'none' }, spec: { prettyName: 'x', quota: { cpu: 1, memory: '1Gi', instances: 1 }, autoEnroll: a } } as unknown as Workspace]),
  );
  const tenant = (role: string, wsName: string) => ({ metadata: { name: 't', labels: {} }, spec: { firstName: 'A', lastName: 'B', workspaces: [{ name: wsName, role }] } }) as unknown as Tenant;
  const table: [string, string, 'labelled' | 'failing'][] = [
    ['candidate', 'withApproval', 'labelled'],
    ['candidate', 'immediate', 'failing'],
    ['candidate', 'none', 'failing'],
    ['user', 'immediate', 'labelled'],
    ['manager', 'none', 'labelled'],
  ];
  for (const [role, w, want] of table) {
    it(`a ${role} of a Workspace with autoEnroll ${w} is ${want}`, () => {
      const { existing, failing } = splitWorkspaces(tenant(role, w), workspaces);
      expect(failing).toEqual(want === 'failing' ? [w] : []);
      const labels = tenantOwnLabels(tenant(role, w), workspaces, { baseWorkspaces: [] });
      expect(labels[`crownlabs.polito.it/workspace-${w}`]).toBe(want === 'labelled' ? role : undefined);
      expect(enrolledWorkspaces(existing).length).toBe(want === 'labelled' && role !== 'candidate' ? 1 : 0);
    });
  }

  const personal = { cpu: 1, memory: '1Gi', instances: 1 };
  it('binds crownlabs-manage-templates to the Tenant in its namespace when it has a personal workspace', () => {
    const r = renderE6([tn('john.doe', { personalWorkspace: personal })]);
    const rb = r.get('RoleBinding', 'crownlabs-manage-templates', 'tenant-john-doe') as Any;
    expect(rb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-templates' });
    expect(rb.subjects).toEqual([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'john.doe' }]);
  });
  it('renders no such binding without a personal workspace, nor without the namespace', () => {
    expect(renderE6([tn('john.doe', {})]).get('RoleBinding', 'crownlabs-manage-templates', 'tenant-john-doe')).toBeUndefined();
    const { inventory } = read([tn('john.doe', { personalWorkspace: personal })]);
    const objects = renderAll(compose(inventory, testConfig({ apiLevel: LEVEL }), { keepPersonalNamespace: () => false })).flatMap((s) => s.objects);
    expect(objects.some((o) => o.kind === 'RoleBinding' && o.metadata.name === 'crownlabs-manage-templates')).toBe(false);
  });

  const DAY = 24 * 3600_000;
  const now = Date.parse('2026-08-01T00:00:00Z');
  const keepAlive: [string, Record<string, unknown>, number, number, boolean][] = [
    ['no login, no Instances, no Templates: dropped', { personalWorkspace: personal }, 0, 0, false],
    ['a personal workspace holding Templates: kept', { personalWorkspace: personal }, 0, 2, true],
    ['Templates without a personal workspace: dropped', {}, 0, 2, false],
    ['Instances: kept', {}, 1, 0, true],
    ['a login within the keep-alive: kept', { lastLogin: new Date(now - DAY / 2).toISOString() }, 0, 0, true],
  ];
  for (const [what, spec, instances, templates, keep] of keepAlive) {
    it(`keep-alive: ${what}`, () => {
      expect(personalNamespaceKeepAlive({ spec } as unknown as Tenant, instances, now, DAY, templates).keep).toBe(keep);
    });
  }
});
