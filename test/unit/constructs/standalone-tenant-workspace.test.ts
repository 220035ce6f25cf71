// The tenant and workspace constructs used on their own, in cdk8s' test chart (Testing.chart()),
// with props written here rather than derived by compose: what each renders, and what an
// optional prop left out changes. tenant-workspace.test.ts covers the same objects through compose.
import { App, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { MyDrive } from '../../../constructs/tenant/my-drive.ts';
import { PlatformChart } from '../../../constructs/platform/platform-chart.ts';
import { SHARED_CLUSTER_ROLES } from '../../../constructs/platform/shared-cluster-roles.ts';
import { Sandbox } from '../../../constructs/tenant/sandbox.ts';
import { TenantNamespace } from '../../../constructs/tenant/tenant-namespace.ts';
import { TenantNetworkPolicies } from '../../../constructs/tenant/tenant-network-policies.ts';
import { TenantQuota } from '../../../constructs/tenant/tenant-quota.ts';
import { TenantRbac } from '../../../constructs/tenant/tenant-rbac.ts';
import { WorkspaceNamespace } from '../../../constructs/workspace/workspace-namespace.ts';
import { WorkspaceRbac } from '../../../constructs/workspace/workspace-rbac.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const labels = { team: 'a' };
const ids = (objects: Any[]) => objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);

function synth(build: (chart: ReturnType<typeof Testing.chart>) => void): Any[] {
  const chart = Testing.chart();
  build(chart);
  return Testing.synth(chart);
}

describe('tenant constructs on their own', () => {
  it('TenantNamespace: one Namespace with exactly the given labels', () => {
    expect(synth((c) => new TenantNamespace(c, 'ns', { name: 'tenant-x', labels }))).toEqual([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-x', labels } }]);
  });

  it('TenantQuota: limits equal requests, plus the Instance count', () => {
    const [quota] = synth((c) => new TenantQuota(c, 'q', { namespace: 'tenant-x', labels, quota: { cpu: '12', memory: '40Gi', instances: 4 } }));
    expect(ids([quota])).toEqual(['ResourceQuota/tenant-x/crownlabs-resource-quota']);
    expect(quota.spec.hard).toEqual({
      'limits.cpu': '12',
      'requests.cpu': '12',
      'limits.memory': '40Gi',
      'requests.memory': '40Gi',
      'count/instances.crownlabs.polito.it': '4',
    });
  });

  it('TenantRbac: the namespace binding, and the ClusterRole on the tenant\'s own object (no delete) with its binding', () => {
    const objects = synth((c) => new TenantRbac(c, 'rbac', { tenantName: 'john.doe', namespace: 'tenant-john-doe', manageRoleName: 'crownlabs-manage-tenant-john-doe', labels }));
    expect(ids(objects)).toEqual(['RoleBinding/tenant-john-doe/crownlabs-manage-instances', 'ClusterRole//crownlabs-manage-tenant-john-doe', 'ClusterRoleBinding//crownlabs-manage-tenant-john-doe']);
    const user = [{ kind: 'User', name: 'john.doe', apiGroup: 'rbac.authorization.k8s.io' }];
    expect(objects[0].subjects).toEqual(user);
    expect(objects[0].roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'crownlabs-manage-instances' });
    expect(objects[1].rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], resourceNames: ['john.doe'], verbs: ['get', 'list', 'watch', 'patch', 'update'] }]);
    expect(objects[2].subjects).toEqual(user);
  });

  it('TenantRbac without a namespace (dropped by keep-alive): only the cluster RBAC', () => {
    const objects = synth((c) => new TenantRbac(c, 'rbac', { tenantName: 'john.doe', manageRoleName: 'm', labels }));
    expect(ids(objects)).toEqual(['ClusterRole//m', 'ClusterRoleBinding//m']);
  });

  it('TenantNetworkPolicies: own-namespace traffic, and traffic from namespaces allowing instance access', () => {
    const objects = synth((c) => new TenantNetworkPolicies(c, 'np', { namespace: 'tenant-x', labels }));
    expect(ids(objects)).toEqual(['NetworkPolicy/tenant-x/crownlabs-deny-ingress-traffic', 'NetworkPolicy/tenant-x/crownlabs-allow-trusted-ingress-traffic']);
    expect(objects[0].spec).toEqual({ podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] });
    expect(objects[1].spec.ingress).toEqual([{ from: [{ namespaceSelector: { matchLabels: { 'crownlabs.polito.it/allow-instance-access': 'true' } } }] }]);
    expect(objects[0].spec.policyTypes).toBeUndefined();
  });

  const drive = { pvcName: 'john-doe-drive', pvcNamespace: 'mydrive-pvcs', size: '1Gi', storageClassName: 'rook-nfs', labels };
  it('MyDrive with a known share and a personal namespace: the RWX PVC and mydrive-info holding the share, base64', () => {
    const objects = synth((c) => new MyDrive(c, 'd', { ...drive, tenantNamespace: 'tenant-john-doe', share: { server: 'nfs.example', path: '/export/pvc-1' } }));
    expect(ids(objects)).toEqual(['PersistentVolumeClaim/mydrive-pvcs/john-doe-drive', 'Secret/tenant-john-doe/mydrive-info']);
    expect(objects[0].spec).toEqual({ accessModes: ['ReadWriteMany'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'rook-nfs' });
    expect(Buffer.from(objects[1].data['server-name'], 'base64').toString()).toBe('nfs.example');
    expect(Buffer.from(objects[1].data.path, 'base64').toString()).toBe('/export/pvc-1');
  });

  it('MyDrive without a share, or without a personal namespace: the PVC alone (it holds the files)', () => {
    expect(ids(synth((c) => new MyDrive(c, 'd', { ...drive, tenantNamespace: 'tenant-john-doe' })))).toEqual(['PersistentVolumeClaim/mydrive-pvcs/john-doe-drive']);
    expect(ids(synth((c) => new MyDrive(c, 'd', { ...drive, share: { server: 's', path: '/p' } })))).toEqual(['PersistentVolumeClaim/mydrive-pvcs/john-doe-drive']);
  });

  it('Sandbox: namespace, editor binding to the given ClusterRole, quota and limit range, labelled for the tenant only', () => {
    const objects = synth((c) => new Sandbox(c, 's', { tenantName: 'john.doe', namespace: 'sandbox-john-doe', clusterRole: 'my-sandbox-role' }));
    expect(ids(objects)).toEqual([
      'Namespace//sandbox-john-doe',
      'RoleBinding/sandbox-john-doe/sandbox-editor',
      'ResourceQuota/sandbox-john-doe/sandbox-resource-quota',
      'LimitRange/sandbox-john-doe/sandbox-limit-range',
    ]);
    const tenantLabels = { 'crownlabs.polito.it/managed-by': 'tenant', 'crownlabs.polito.it/type': 'sandbox', 'crownlabs.polito.it/tenant': 'john.doe' };
    expect(objects[0].metadata.labels).toEqual({ ...tenantLabels, 'pod-security.kubernetes.io/enforce': 'baseline' });
    for (const o of objects.slice(1)) expect(o.metadata.labels).toEqual(tenantLabels);
    expect(objects[1].roleRef.name).toBe('my-sandbox-role');
    expect(objects[2].spec.hard).toMatchObject({ 'limits.cpu': '4', 'limits.memory': '8G', 'requests.cpu': '2', 'requests.memory': '8G' });
  });

  it('Sandbox: the namespace enforces the Pod Security level asked for, baseline by default', () => {
    const ns = (podSecurity?: 'privileged' | 'baseline' | 'restricted') =>
      synth((c) => new Sandbox(c, 's', { tenantName: 't', namespace: 'sandbox-t', clusterRole: 'r', podSecurity }))[0].metadata.labels['pod-security.kubernetes.io/enforce'];
    expect(ns()).toBe('baseline');
    expect(ns('restricted')).toBe('restricted');
    expect(ns('privileged')).toBe('privileged');
  });

  it('Sandbox: the quota counts every kind the sandbox role lets the tenant create', () => {
    const hard = synth((c) => new Sandbox(c, 's', { tenantName: 't', namespace: 'sandbox-t', clusterRole: 'r' }))[2].spec.hard;
    const role = new PlatformChart(new App(), 'p', {}).toJson().find((o: Any) => o.metadata.name === SHARED_CLUSTER_ROLES.sandbox);
    // Every top-level resource the role may create (subresources are not objects).
    const creatable = role.rules
      .filter((r: Any) => r.verbs.includes('create'))
      .flatMap((r: Any) => r.resources.filter((res: string) => !res.includes('/')).flatMap((res: string) => r.apiGroups.map((g: string) => (g ? `${res}.${g}` : res))));
    expect(creatable.length).toBeGreaterThan(10);
    for (const res of creatable) {
      const key = res === 'pods' ? 'pods' : `count/${res}`;
      expect(hard[key], key).toMatch(/^[1-9]\d*$/);
    }
    expect(hard['count/secrets']).toBe('50');
    expect(hard['count/configmaps']).toBe('50');
  });
});

describe('workspace constructs on their own', () => {
  it('WorkspaceNamespace adds the workspace type label to the given ones', () => {
    expect(synth((c) => new WorkspaceNamespace(c, 'ns', { name: 'workspace-tea', labels }))).toEqual([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'workspace-tea', labels: { ...labels, 'crownlabs.polito.it/type': 'workspace' } } },
    ]);
  });

  it('WorkspaceRbac binds managers and users, by their Keycloak groups, to the four roles', () => {
    const objects = synth((c) => new WorkspaceRbac(c, 'rbac', { workspaceName: 'tea', namespace: 'workspace-tea', labels }));
    const bindings = objects.map((o) => [`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o.roleRef.name, o.subjects.map((s: Any) => s.name).join()]);
    expect(bindings).toEqual([
      ['ClusterRoleBinding//crownlabs-manage-instances-tea', 'crownlabs-manage-instances', 'kubernetes:workspace-tea:manager'],
      ['RoleBinding/workspace-tea/crownlabs-view-templates', 'crownlabs-view-templates', 'kubernetes:workspace-tea:user'],
      ['RoleBinding/workspace-tea/crownlabs-manage-templates', 'crownlabs-manage-templates', 'kubernetes:workspace-tea:manager'],
      ['ClusterRoleBinding//crownlabs-manage-tenants-tea', 'crownlabs-manage-tenants', 'kubernetes:workspace-tea:manager'],
    ]);
  });
});
