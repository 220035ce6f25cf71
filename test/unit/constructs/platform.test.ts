import { App } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { PlatformChart } from '../../../constructs/platform/platform-chart.ts';
import { SHARED_CLUSTER_ROLES } from '../../../constructs/platform/shared-cluster-roles.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const ALL = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];
const READ = ['get', 'list', 'watch'];
const CL = 'crownlabs.polito.it';

function platform(props: ConstructorParameters<typeof PlatformChart>[2] = {}): Any[] {
  return new PlatformChart(new App(), 'platform', props).toJson();
}
const role = (objects: Any[], name: string): Any => {
  const o = objects.find((x) => x.kind === 'ClusterRole' && x.metadata.name === name);
  if (!o) throw new Error(`no ClusterRole ${name}`);
  return o;
};
/** (apiGroup, resource) → verbs, merged over every rule. */
function grants(r: Any): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const rule of r.rules) {
    expect(rule.resourceNames, 'no rule is limited to names').toBeUndefined();
    for (const g of rule.apiGroups) for (const res of rule.resources) {
      const key = `${g}/${res}`;
      const set = out.get(key) ?? new Set<string>();
      for (const v of rule.verbs) set.add(v);
      out.set(key, set);
    }
  }
  return out;
}

describe('PlatformChart: the shared ClusterRoles of docs/behaviour.md §3', () => {
  const objects = platform();

  it('renders exactly the five ClusterRoles, cluster-scoped, with our labels', () => {
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`).sort()).toEqual(
      [
        'crownlabs-manage-instances',
        'crownlabs-manage-templates',
        'crownlabs-manage-tenants',
        'crownlabs-sandbox',
        'crownlabs-view-templates',
      ].map((n) => `rbac.authorization.k8s.io/v1 ClusterRole/${n}`),
    );
    for (const o of objects) {
      expect(o.metadata.namespace).toBeUndefined();
      expect(o.metadata.labels).toEqual({ 'app.kubernetes.io/managed-by': 'crownlabs-composer', 'app.kubernetes.io/part-of': 'crownlabs' });
      expect(o.aggregationRule).toBeUndefined();
    }
    expect(Object.values(SHARED_CLUSTER_ROLES).sort()).toEqual(objects.map((o) => o.metadata.name).sort());
  });

  it('with SharedVolumes (e62be9e), also crownlabs-manage-sharedvolumes: every verb on sharedvolumes, nothing else', () => {
    const withVolumes = platform({ sharedVolumes: true });
    expect(withVolumes.map((o) => o.metadata.name).sort()).toEqual([...objects.map((o) => o.metadata.name), 'crownlabs-manage-sharedvolumes'].sort());
    expect(role(withVolumes, 'crownlabs-manage-sharedvolumes').rules).toEqual([{ apiGroups: [CL], resources: ['sharedvolumes'], verbs: ALL }]);
  });

  it('crownlabs-manage-instances: every verb on instances and instances/status, nothing else', () => {
    expect(role(objects, 'crownlabs-manage-instances').rules).toEqual([
      { apiGroups: [CL], resources: ['instances', 'instances/status'], verbs: ALL },
    ]);
  });

  it('crownlabs-view-templates: read-only templates', () => {
    expect(role(objects, 'crownlabs-view-templates').rules).toEqual([{ apiGroups: [CL], resources: ['templates'], verbs: READ }]);
  });

  it('crownlabs-manage-templates: full CRUD on templates, deletecollection included', () => {
    expect(role(objects, 'crownlabs-manage-templates').rules).toEqual([{ apiGroups: [CL], resources: ['templates'], verbs: ALL }]);
  });

  it('crownlabs-manage-tenants: read, create and edit tenants, but no delete', () => {
    const r = role(objects, 'crownlabs-manage-tenants');
    expect(r.rules).toEqual([{ apiGroups: [CL], resources: ['tenants'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]);
    expect(r.rules[0].verbs).not.toContain('delete');
    expect(r.rules[0].verbs).not.toContain('deletecollection');
    expect(r.rules[0].verbs).not.toContain('*');
  });

  it('crownlabs-sandbox: namespaced edit over core, apps, batch, autoscaling, networking and rbac roles; read-only metrics', () => {
    const g = grants(role(objects, 'crownlabs-sandbox'));
    const full = (key: string) => expect([...(g.get(key) ?? [])].sort(), key).toEqual([...ALL].sort());
    for (const r of ['pods', 'pods/exec', 'pods/log', 'pods/portforward', 'services', 'configmaps', 'secrets', 'persistentvolumeclaims', 'serviceaccounts']) full(`/${r}`);
    for (const r of ['deployments', 'deployments/scale', 'replicasets', 'statefulsets']) full(`apps/${r}`);
    full('batch/jobs');
    full('batch/cronjobs');
    full('autoscaling/horizontalpodautoscalers');
    full('networking.k8s.io/ingresses');
    full('networking.k8s.io/networkpolicies');
    full('rbac.authorization.k8s.io/roles');
    full('rbac.authorization.k8s.io/rolebindings');
    expect([...g.get('metrics.k8s.io/pods')!].sort()).toEqual([...READ].sort());
    expect([...g.get('metrics.k8s.io/nodes')!].sort()).toEqual([...READ].sort());
    // Namespaced only: nothing cluster-scoped, no wildcards, no way out of the sandbox's quota.
    for (const [key, verbs] of g) {
      expect(key, 'no wildcard').not.toMatch(/\*/);
      expect([...verbs], key).not.toContain('*');
      expect(key).not.toMatch(/^rbac\.authorization\.k8s\.io\/cluster/);
      expect(key).not.toMatch(/^\/(namespaces|nodes|persistentvolumes)$/);
      if (['/resourcequotas', '/limitranges'].includes(key)) expect([...verbs].sort(), key).toEqual([...READ].sort());
    }
    expect([...g.keys()].filter((k) => k.startsWith('metrics.k8s.io/')).every((k) => [...g.get(k)!].every((v) => READ.includes(v)))).toBe(true);
    const groups = new Set([...g.keys()].map((k) => k.split('/')[0]));
    expect([...groups].sort()).toEqual(['', 'apps', 'autoscaling', 'batch', 'metrics.k8s.io', 'networking.k8s.io', 'rbac.authorization.k8s.io']);
  });

  it('crownlabs-sandbox: no Endpoints or EndpointSlices (a relay to other pods) and no DaemonSets, with any verb', () => {
    const g = grants(role(objects, 'crownlabs-sandbox'));
    for (const key of ['/endpoints', 'discovery.k8s.io/endpointslices', 'apps/daemonsets', 'extensions/daemonsets']) expect(g.get(key), key).toBeUndefined();
    // Nor through a wildcard group or resource.
    for (const r of role(objects, 'crownlabs-sandbox').rules) {
      expect(r.apiGroups).not.toContain('*');
      expect(r.apiGroups).not.toContain('discovery.k8s.io');
      expect(r.resources).not.toContain('*');
    }
  });

  it('names the sandbox ClusterRole after the configuration, and keeps extra chart labels', () => {
    const objs = platform({ sandboxClusterRole: 'lab-sandbox', chartLabels: { 'composer.crownlabs.polito.it/parent-kind': 'Platform' } });
    expect(objs.map((o) => o.metadata.name)).toContain('lab-sandbox');
    expect(objs.map((o) => o.metadata.name)).not.toContain('crownlabs-sandbox');
    for (const o of objs) expect(o.metadata.labels['composer.crownlabs.polito.it/parent-kind']).toBe('Platform');
  });
});
