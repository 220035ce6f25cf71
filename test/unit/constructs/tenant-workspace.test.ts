import { describe, expect, it } from 'vitest';
import { SANDBOX_OBJECT_COUNTS } from '../../../constructs/tenant/sandbox.ts';
import { cleanName, tenantOwnLabels, tenantQuota } from '../../../src/model/tenant-plan.ts';
import { inventoryFrom, render, testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };

const workspace = (name: string, cpu: unknown, memory: string, instances: number, labels: Record<string, string> = TARGET) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name, labels }, spec: { prettyName: `WS ${name}`, quota: { cpu, memory, instances } } });
const tenant = (name: string, spec: Record<string, unknown>, labels: Record<string, string> = TARGET) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name, labels }, spec: { firstName: 'John', lastName: 'Doe', email: 'j@example.com', ...spec } });

const SAMPLE = [
  workspace('tea', 8, '15Gi', 3),
  workspace('coffee', 10, '25Gi', 5),
  tenant('john.doe', { workspaces: [{ name: 'tea', role: 'user' }, { name: 'coffee', role: 'manager' }] }),
].join('\n---\n');

describe('§4.2 workspace objects', () => {
  const r = render(SAMPLE);
  it('renders namespace workspace-<name> with the workspace labels', () => {
    expect((r.get('Namespace', 'workspace-tea') as Any).metadata.labels).toMatchObject({
      ...TARGET,
      'crownlabs.polito.it/managed-by': 'workspace',
      'crownlabs.polito.it/type': 'workspace',
    });
  });
  it('binds the four roles to the kubernetes:workspace-<ws>:<role> groups', () => {
    const group = (name: string) => [{ kind: 'Group', name, apiGroup: 'rbac.authorization.k8s.io' }];
    const crb1 = r.get('ClusterRoleBinding', 'crownlabs-manage-instances-tea') as Any;
    expect(crb1.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-instances' });
    expect(crb1.subjects).toEqual(group('kubernetes:workspace-tea:manager'));
    const view = r.get('RoleBinding', 'crownlabs-view-templates', 'workspace-tea') as Any;
    expect(view.roleRef.name).toBe('crownlabs-view-templates');
    expect(view.subjects).toEqual(group('kubernetes:workspace-tea:user'));
    const manage = r.get('RoleBinding', 'crownlabs-manage-templates', 'workspace-tea') as Any;
    expect(manage.subjects).toEqual(group('kubernetes:workspace-tea:manager'));
    const tenants = r.get('ClusterRoleBinding', 'crownlabs-manage-tenants-tea') as Any;
    expect(tenants.roleRef.name).toBe('crownlabs-manage-tenants');
    expect(tenants.subjects).toEqual(group('kubernetes:workspace-tea:manager'));
  });
});

describe('§5.4 tenant objects (the §13 example)', () => {
  const r = render(SAMPLE);
  const common = { ...TARGET, 'crownlabs.polito.it/managed-by': 'tenant' };
  it('renders namespace tenant-john-doe with its labels', () => {
    expect((r.get('Namespace', 'tenant-john-doe') as Any).metadata.labels).toMatchObject({
      ...common,
      'crownlabs.polito.it/type': 'tenant',
      'crownlabs.polito.it/name': 'john.doe',
      'crownlabs.polito.it/instance-resources-replication': 'true',
    });
  });
  it('sums the workspace quotas: cpu 18, memory 40Gi, instances 8', () => {
    expect((r.get('ResourceQuota', 'crownlabs-resource-quota', 'tenant-john-doe') as Any).spec.hard).toEqual({
      'limits.cpu': '18',
      'requests.cpu': '18',
      'limits.memory': '40Gi',
      'requests.memory': '40Gi',
      'count/instances.crownlabs.polito.it': '8',
    });
  });
  it('lets the tenant manage instances and its own Tenant object', () => {
    const user = [{ kind: 'User', name: 'john.doe', apiGroup: 'rbac.authorization.k8s.io' }];
    const rb = r.get('RoleBinding', 'crownlabs-manage-instances', 'tenant-john-doe') as Any;
    expect(rb.roleRef.name).toBe('crownlabs-manage-instances');
    expect(rb.subjects).toEqual(user);
    const cr = r.get('ClusterRole', 'crownlabs-manage-tenant-john-doe') as Any;
    expect(cr.rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], resourceNames: ['john.doe'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }]);
    const crb = r.get('ClusterRoleBinding', 'crownlabs-manage-tenant-john-doe') as Any;
    expect(crb.roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-tenant-john-doe' });
    expect(crb.subjects).toEqual(user);
  });
  it('isolates the namespace: same-namespace pods and trusted namespaces only', () => {
    const deny = r.get('NetworkPolicy', 'crownlabs-deny-ingress-traffic', 'tenant-john-doe') as Any;
    expect(deny.spec).toEqual({ podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] });
    const allow = r.get('NetworkPolicy', 'crownlabs-allow-trusted-ingress-traffic', 'tenant-john-doe') as Any;
    expect(allow.spec).toEqual({ podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'crownlabs.polito.it/allow-instance-access': 'true' } } }] }] });
  });
  it('creates the MyDrive PVC in mydrive-pvcs and the mydrive-info Secret from the configured share', () => {
    const pvc = r.get('PersistentVolumeClaim', 'john-doe-drive', 'mydrive-pvcs') as Any;
    expect(pvc.spec).toEqual({ accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'rook-nfs' });
    expect(pvc.metadata.labels).toMatchObject(common);
    const info = r.get('Secret', 'mydrive-info', 'tenant-john-doe') as Any;
    expect(Buffer.from(info.data['server-name'], 'base64').toString()).toBe('nfs.example');
    expect(Buffer.from(info.data.path, 'base64').toString()).toBe('/export/john-doe-drive');
  });
  it('renders no sandbox unless asked', () => {
    expect(r.find('Namespace', 'sandbox-john-doe')).toBeUndefined();
  });
});

describe('§5.5 sandbox', () => {
  it('enforces the Pod Security level of sandboxPodSecurity', () => {
    const ns = render([SAMPLE, tenant('ann.b', { createSandbox: true })].join('\n---\n'), testConfig({ sandboxPodSecurity: 'restricted' })).get('Namespace', 'sandbox-ann-b') as Any;
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });
  const r = render([SAMPLE, tenant('ann.b', { createSandbox: true })].join('\n---\n'));
  const labels = { 'crownlabs.polito.it/managed-by': 'tenant', 'crownlabs.polito.it/type': 'sandbox', 'crownlabs.polito.it/tenant': 'ann.b' };
  it('renders namespace, editor binding, quota and limit range, without the target label', () => {
    const ns = r.get('Namespace', 'sandbox-ann-b') as Any;
    expect(ns.metadata.labels).toMatchObject(labels);
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('baseline');
    expect(ns.metadata.labels['crownlabs.polito.it/operator-selector']).toBeUndefined();
    expect((r.get('RoleBinding', 'sandbox-editor', 'sandbox-ann-b') as Any).roleRef.name).toBe('crownlabs-sandbox');
    expect((r.get('ResourceQuota', 'sandbox-resource-quota', 'sandbox-ann-b') as Any).spec.hard).toEqual({ 'limits.cpu': '4', 'limits.memory': '8G', 'requests.cpu': '2', 'requests.memory': '8G', ...SANDBOX_OBJECT_COUNTS });
    expect((r.get('LimitRange', 'sandbox-limit-range', 'sandbox-ann-b') as Any).spec.limits).toEqual([
      { type: 'Container', defaultRequest: { cpu: '10m', memory: '50M' }, default: { cpu: '100m', memory: '250M' } },
    ]);
  });
});

describe('§5.3 step 6 quota arithmetic', () => {
  const caps = testConfig();
  const inv = (text: string) => inventoryFrom(text);
  it('caps each part when the sum reaches the cap', () => {
    const i = inv([workspace('a', 20, '30G', 6), workspace('b', 5, '20G', 4), tenant('t', { workspaces: [{ name: 'a', role: 'user' }, { name: 'b', role: 'user' }] })].join('\n---\n'));
    expect(tenantQuota(i.tenants.get('t')!, [...i.workspaces.values()], caps)).toEqual({ cpu: '25', memory: '50G', instances: 10 });
  });
  it('keeps sums below the caps as they add up', () => {
    const i = inv([workspace('a', '500m', '512Mi', 1), workspace('b', '1500m', '512Mi', 1), tenant('t', {})].join('\n---\n'));
    expect(tenantQuota(i.tenants.get('t')!, [...i.workspaces.values()], caps)).toEqual({ cpu: '2', memory: '1Gi', instances: 2 });
  });
  it('uses spec.quota verbatim when set', () => {
    const i = inv([workspace('a', 20, '30G', 6), tenant('t', { quota: { cpu: 3, memory: '2048Mi', instances: 1 } })].join('\n---\n'));
    expect(tenantQuota(i.tenants.get('t')!, [...i.workspaces.values()], caps)).toEqual({ cpu: '3', memory: '2Gi', instances: 1 });
  });
  it('honours configured caps', () => {
    const i = inv([workspace('a', 20, '30G', 6), tenant('t', {})].join('\n---\n'));
    expect(tenantQuota(i.tenants.get('t')!, [...i.workspaces.values()], { capCpu: '10', capMemory: '100G', capInstances: 3 })).toEqual({ cpu: '10', memory: '30G', instances: 3 });
  });
});

describe('§5.6 labels on the Tenant itself', () => {
  it('cleans names as upstream does', () => {
    expect(cleanName('De Luca')).toBe('De_Luca');
    expect(cleanName('José')).toBe('Jos');
    expect(cleanName("O'Neil")).toBe('ONeil');
    expect(cleanName(' _Anna Maria_ ')).toBe('Anna_Maria');
  });
  it('writes workspace roles of existing workspaces, drops stale ones, and no-workspaces by base workspaces', () => {
    const i = inventoryFrom(
      [
        workspace('tea', 1, '1G', 1),
        workspace('utilities', 1, '1G', 1),
        tenant('t', { workspaces: [{ name: 'tea', role: 'manager' }, { name: 'ghost', role: 'user' }] }, { ...TARGET, 'crownlabs.polito.it/workspace-old': 'user', keep: 'me' }),
        tenant('u', { workspaces: [{ name: 'utilities', role: 'user' }] }),
      ].join('\n---\n'),
    );
    const cfg = { baseWorkspaces: ['utilities'] };
    expect(tenantOwnLabels(i.tenants.get('t')!, i.workspaces, cfg)).toEqual({
      ...TARGET,
      keep: 'me',
      'crownlabs.polito.it/workspace-tea': 'manager',
      'crownlabs.polito.it/first-name': 'John',
      'crownlabs.polito.it/last-name': 'Doe',
    });
    expect(tenantOwnLabels(i.tenants.get('u')!, i.workspaces, cfg)).toMatchObject({ 'crownlabs.polito.it/no-workspaces': 'true', 'crownlabs.polito.it/workspace-utilities': 'user' });
  });
});

describe('§2.1 target label', () => {
  it('renders only matching Tenants and Workspaces and stamps the label on their children', () => {
    const r = render([workspace('tea', 1, '1G', 1), workspace('other', 1, '1G', 1, { 'crownlabs.polito.it/operator-selector': 'staging' }), tenant('t', {}, {})].join('\n---\n'));
    expect(r.find('Namespace', 'workspace-tea')).toBeDefined();
    expect(r.find('Namespace', 'workspace-other')).toBeUndefined();
    expect(r.find('Namespace', 'tenant-t')).toBeUndefined();
    expect(r.problems.filter((p) => /skipped: no target label/.test(p.message))).toHaveLength(2);
    const cfg = testConfig({ targetLabel: { key: 'crownlabs.polito.it/operator-selector', value: 'staging' } });
    const s = render([workspace('other', 1, '1G', 1, { 'crownlabs.polito.it/operator-selector': 'staging' })].join('\n---\n'), cfg);
    expect((s.get('ClusterRoleBinding', 'crownlabs-manage-tenants-other') as Any).metadata.labels['crownlabs.polito.it/operator-selector']).toBe('staging');
  });
});

describe('Decision 4: unknown workspaces', () => {
  it('reports every unknown workspace and still renders the rest of the Tenant', () => {
    const r = render([workspace('tea', 8, '15Gi', 3), tenant('t', { workspaces: [{ name: 'tea', role: 'user' }, { name: 'nope', role: 'user' }, { name: 'gone', role: 'manager' }] })].join('\n---\n'));
    expect(r.find('Namespace', 'tenant-t')).toBeDefined();
    expect((r.get('ResourceQuota', 'crownlabs-resource-quota', 'tenant-t') as Any).spec.hard['limits.cpu']).toBe('8');
  });
});
