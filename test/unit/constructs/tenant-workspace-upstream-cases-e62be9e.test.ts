// Upstream's Tenant and Workspace controller cases at e62be9e, restated as rows over what compose
// renders for a Tenant's or a Workspace's set (docs/behaviour.md §4.2, §5.4, §5.5, §16.4). Where
// upstream asks "does the object exist after a reconcile", a row asks whether the set holds it; the
// keep-alive decision the controller makes (personalNamespaceKeepAlive) is passed to compose as
// the controller passes it. Cases that inject API failures into the reconcile are not restated.
import { describe, expect, it } from 'vitest';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import type { KubeObject, Tenant } from '../../../src/inputs/types.ts';
import { personalNamespaceKeepAlive } from '../../../src/controller/reconcile-tenant.ts';
import type { ComposerConfig } from '../../../src/config/config.ts';
import { testConfig } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const LEVEL = 'e62be9e' as const;
const KEY = 'crownlabs.polito.it/operator-selector';
const TARGET = { [KEY]: 'test' };
const RBAC = 'rbac.authorization.k8s.io';
const NAME = 'testuser';
const NS = `tenant-${NAME}`;
const NOW = Date.parse('2026-08-01T12:00:00Z');
const HOUR = 3600_000;
const KEEP_ALIVE = 24 * HOUR;
const config = (over: Partial<ComposerConfig> = {}) =>
  testConfig({ apiLevel: LEVEL, targetLabel: { key: KEY, value: 'test' }, sandboxClusterRole: 'test-sandbox-editor', mydrivePvcsNamespace: 'mydrive-pvcs', mydrivePvcsSize: '5Gi', mydrivePvcsStorageClassName: 'nfs', baseWorkspaces: ['base-ws1'], ...over });

const tenantDoc = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = TARGET) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name, labels }, spec: { firstName: 'Test', lastName: 'Tenant', email: 'test@tenant.example', lastLogin: new Date(NOW).toISOString(), ...spec } });
const workspaceDoc = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = TARGET) =>
  JSON.stringify({ apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name, labels }, spec: { prettyName: 'Test Workspace', quota: { cpu: 2, memory: '4Gi', instances: 2 }, ...spec } });
const PERSONAL = { cpu: 4, memory: '8Gi', instances: 2 };

interface Lab {
  /** Instances and Templates in the personal namespace, as the controller counts them for the keep-alive. */
  instances?: number;
  templates?: number;
  config?: ComposerConfig;
}

function renderSet(docs: string[], lab: Lab = {}) {
  const parsed = parseInputText(docs.join('\n---\n'), 'upstream-cases.yaml', LEVEL);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, LEVEL);
  const errors = [...parsed.problems, ...problems].filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`bad test input: ${JSON.stringify(errors)}`);
  const keep = (t: Tenant) => personalNamespaceKeepAlive(t, lab.instances ?? 0, NOW, KEEP_ALIVE, lab.templates ?? 0).keep;
  const composition = compose(inventory, lab.config ?? config(), { keepPersonalNamespace: keep });
  const objects: KubeObject[] = renderAll(composition).flatMap((s) => s.objects);
  const find = (kind: string, name: string, namespace?: string) => objects.find((o) => o.kind === kind && o.metadata.name === name && o.metadata.namespace === namespace) as Any;
  return { objects, find, composition };
}

const user = (name: string) => [{ kind: 'User', name, apiGroup: RBAC }];
const group = (name: string) => [{ kind: 'Group', name, apiGroup: RBAC }];
const clusterRole = (name: string) => ({ apiGroup: RBAC, kind: 'ClusterRole', name });
const commonLabels = (manager: 'tenant' | 'workspace') => ({ [KEY]: 'test', 'crownlabs.polito.it/managed-by': manager });

describe('upstream tenant "Namespace management": the personal namespace and what it holds', () => {
  const { find } = renderSet([tenantDoc(NAME)]);
  const rows: [what: string, kind: string, name: string, namespace: string | undefined, check: (o: Any) => void][] = [
    ['the namespace, labelled as a tenant one of this shard', 'Namespace', NS, undefined, (o) =>
      expect(o.metadata.labels).toMatchObject({ 'crownlabs.polito.it/type': 'tenant', 'crownlabs.polito.it/name': NAME, 'crownlabs.polito.it/managed-by': 'tenant', [KEY]: 'test', 'crownlabs.polito.it/instance-resources-replication': 'true' })],
    ['the ResourceQuota, with hard limits', 'ResourceQuota', 'crownlabs-resource-quota', NS, (o) => {
      expect(o.metadata.labels).toMatchObject(commonLabels('tenant'));
      expect(Object.keys(o.spec.hard).length).toBeGreaterThan(0);
    }],
    ['the binding that lets the tenant manage Instances there', 'RoleBinding', 'crownlabs-manage-instances', NS, (o) => {
      expect(o.metadata.labels).toMatchObject(commonLabels('tenant'));
      expect(o.roleRef).toEqual(clusterRole('crownlabs-manage-instances'));
      expect(o.subjects).toEqual(user(NAME));
    }],
    ['the policy accepting traffic from its own pods only', 'NetworkPolicy', 'crownlabs-deny-ingress-traffic', NS, (o) => {
      expect(o.metadata.labels).toMatchObject(commonLabels('tenant'));
      expect(o.spec.podSelector).toEqual({});
      expect(o.spec.ingress).toEqual([{ from: [{ podSelector: {} }] }]);
    }],
    ['the policy accepting traffic from trusted namespaces', 'NetworkPolicy', 'crownlabs-allow-trusted-ingress-traffic', NS, (o) => {
      expect(o.metadata.labels).toMatchObject(commonLabels('tenant'));
      expect(o.spec.podSelector).toEqual({});
      expect(o.spec.ingress).toEqual([{ from: [{ namespaceSelector: { matchLabels: { 'crownlabs.polito.it/allow-instance-access': 'true' } } }] }]);
    }],
  ];
  for (const [what, kind, name, namespace, check] of rows) {
    it(`renders ${what} (${kind} ${name})`, () => {
      const o = find(kind, name, namespace);
      expect(o, `${kind} ${name}`).toBeDefined();
      check(o);
    });
  }

  it('names the namespace of a Tenant with dots in its name after the name, dots made dashes', () => {
    expect(renderSet([tenantDoc('test.tenant.with.dots')]).find('Namespace', 'tenant-test-tenant-with-dots')).toBeDefined();
  });
});

describe('upstream tenant keep-alive: whether the personal namespace and its objects are rendered', () => {
  const ago = (ms: number) => new Date(NOW - ms).toISOString();
  const IN_NS: [string, string][] = [
    ['ResourceQuota', 'crownlabs-resource-quota'],
    ['RoleBinding', 'crownlabs-manage-instances'],
    ['NetworkPolicy', 'crownlabs-deny-ingress-traffic'],
    ['NetworkPolicy', 'crownlabs-allow-trusted-ingress-traffic'],
  ];
  const rows: [what: string, spec: Record<string, unknown>, lab: Lab, kept: boolean][] = [
    ['a login 48 h ago, no Instances: dropped', { lastLogin: ago(48 * HOUR) }, {}, false],
    ['a login 48 h ago, one running Instance: kept', { lastLogin: ago(48 * HOUR) }, { instances: 1 }, true],
    ['a login 48 h ago, three Instances: kept', { lastLogin: ago(48 * HOUR) }, { instances: 3 }, true],
    ['no lastLogin at all, no Instances: dropped', { lastLogin: undefined }, {}, false],
    ['a login an hour ago: kept', { lastLogin: ago(HOUR) }, {}, true],
    ['a login now: kept', {}, {}, true],
    ['a login just past the keep-alive, a personal workspace holding Templates: kept', { lastLogin: ago(KEEP_ALIVE + 1000), personalWorkspace: PERSONAL }, { templates: 1 }, true],
    ['a login just past the keep-alive, a personal workspace without Templates: dropped', { lastLogin: ago(KEEP_ALIVE + 1000), personalWorkspace: PERSONAL }, {}, false],
    ['a login just past the keep-alive, Templates but no personal workspace: dropped', { lastLogin: ago(KEEP_ALIVE + 1000) }, { templates: 1 }, false],
    ['a login now, a personal workspace: kept', { personalWorkspace: PERSONAL }, {}, true],
  ];
  for (const [what, spec, lab, kept] of rows) {
    it(what, () => {
      const { find } = renderSet([tenantDoc(NAME, spec)], lab);
      expect(find('Namespace', NS) !== undefined, 'Namespace').toBe(kept);
      for (const [kind, name] of IN_NS) expect(find(kind, name, NS) !== undefined, `${kind} ${name}`).toBe(kept);
      // The Tenant's cluster RBAC does not depend on the namespace.
      expect(find('ClusterRole', `crownlabs-manage-tenant-${NAME}`)).toBeDefined();
    });
  }
});

describe('upstream tenant "Personal workspace handling": the manage-templates binding', () => {
  const rows: [what: string, spec: Record<string, unknown>, bound: boolean][] = [
    ['a personal workspace and a live namespace: bound', { personalWorkspace: PERSONAL }, true],
    ['no personal workspace: not bound', {}, false],
    ['a personal workspace but the namespace dropped by keep-alive: not bound', { personalWorkspace: PERSONAL, lastLogin: new Date(NOW - KEEP_ALIVE - 1000).toISOString() }, false],
    ['neither: not bound', { lastLogin: new Date(NOW - KEEP_ALIVE - 1000).toISOString() }, false],
  ];
  for (const [what, spec, bound] of rows) {
    it(what, () => {
      const rb = renderSet([tenantDoc(NAME, spec)]).find('RoleBinding', 'crownlabs-manage-templates', NS);
      expect(rb !== undefined).toBe(bound);
      if (!bound) return;
      expect(rb.metadata.labels).toMatchObject(commonLabels('tenant'));
      expect(rb.roleRef).toEqual(clusterRole('crownlabs-manage-templates'));
      expect(rb.subjects).toEqual(user(NAME));
    });
  }
});

describe('upstream tenant "Sandbox"', () => {
  const SB = `sandbox-${NAME}`;
  it('createSandbox: a namespace, an editor binding to the configured ClusterRole, a quota and a limit range', () => {
    const { find } = renderSet([tenantDoc(NAME, { createSandbox: true })]);
    expect(find('Namespace', SB)).toBeDefined();
    const rb = find('RoleBinding', 'sandbox-editor', SB);
    expect(rb.roleRef).toEqual(clusterRole('test-sandbox-editor'));
    expect(rb.subjects).toEqual(user(NAME));
    expect(find('ResourceQuota', 'sandbox-resource-quota', SB)).toBeDefined();
    expect(find('LimitRange', 'sandbox-limit-range', SB)).toBeDefined();
  });
  it('no createSandbox: nothing in a sandbox namespace (an existing one is pruned with the set)', () => {
    const { objects } = renderSet([tenantDoc(NAME)]);
    expect(objects.filter((o) => o.metadata.name === SB || o.metadata.namespace === SB)).toEqual([]);
  });
});

describe('upstream tenant "Cluster Resources": access to its own Tenant object', () => {
  const { find } = renderSet([tenantDoc(NAME)]);
  it('a ClusterRole crownlabs-manage-tenant-<name> with one rule on that Tenant only', () => {
    const cr = find('ClusterRole', `crownlabs-manage-tenant-${NAME}`);
    expect(cr.rules).toHaveLength(1);
    expect(cr.rules[0]).toMatchObject({ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], resourceNames: [NAME] });
    expect([...cr.rules[0].verbs].sort()).toEqual(['get', 'list', 'patch', 'update', 'watch']);
  });
  it('a ClusterRoleBinding of the same name binding it to the tenant user', () => {
    const crb = find('ClusterRoleBinding', `crownlabs-manage-tenant-${NAME}`);
    expect(crb.roleRef).toEqual(clusterRole(`crownlabs-manage-tenant-${NAME}`));
    expect(crb.subjects).toEqual(user(NAME));
  });
});

describe('upstream tenant "MyDrive management": the PVC in the MyDrive namespace', () => {
  it('is ReadWriteMany, of the configured class and size, with the shard label', () => {
    const pvc = renderSet([tenantDoc(NAME)]).find('PersistentVolumeClaim', `${NAME}-drive`, 'mydrive-pvcs');
    expect(pvc.metadata.labels).toMatchObject(TARGET);
    expect(pvc.spec.accessModes).toEqual(['ReadWriteMany']);
    expect(pvc.spec.storageClassName).toBe('nfs');
    expect(pvc.spec.resources.requests).toEqual({ storage: '5Gi' });
  });
});

describe('upstream tenant and workspace reconcilers: only this shard\'s objects', () => {
  it('a Tenant labelled for another shard renders nothing', () => {
    expect(renderSet([tenantDoc(NAME, {}, { [KEY]: 'other' })]).objects).toEqual([]);
  });
  it('a Workspace labelled for another shard renders nothing', () => {
    expect(renderSet([workspaceDoc('test-workspace', {}, { [KEY]: 'other' })]).objects).toEqual([]);
  });
  it('a Workspace change reaches the Tenants enrolled in it, and only them', () => {
    const ws = 'test-workspace';
    const { composition } = renderSet([
      workspaceDoc(ws),
      tenantDoc('enrolled-tenant-1', { workspaces: [{ name: ws, role: 'user' }] }),
      tenantDoc('enrolled-tenant-2', { workspaces: [{ name: ws, role: 'manager' }] }),
      tenantDoc('not-enrolled-tenant-1'),
      tenantDoc('not-enrolled-tenant-2', { workspaces: [{ name: 'other-workspace', role: 'user' }] }),
    ]);
    const dependents = [...composition.dependencies].filter(([parent, deps]) => parent.startsWith('Tenant/') && deps.includes(`Workspace/${ws}`)).map(([parent]) => parent).sort();
    expect(dependents).toEqual(['Tenant/enrolled-tenant-1', 'Tenant/enrolled-tenant-2']);
  });
});

describe('upstream workspace "Namespace", "ClusterRoleBinding", "RoleBinding"', () => {
  const WS = 'test-workspace';
  const WNS = `workspace-${WS}`;
  const { find } = renderSet([workspaceDoc(WS)]);
  const rows: [kind: string, name: string, namespace: string | undefined, check: (o: Any) => void][] = [
    ['Namespace', WNS, undefined, (o) => expect(o.metadata.labels).toMatchObject({ ...commonLabels('workspace'), 'crownlabs.polito.it/type': 'workspace' })],
    ['ClusterRoleBinding', `crownlabs-manage-instances-${WS}`, undefined, (o) => {
      expect(o.roleRef).toEqual(clusterRole('crownlabs-manage-instances'));
      expect(o.subjects).toEqual(group(`kubernetes:workspace-${WS}:manager`));
    }],
    ['ClusterRoleBinding', `crownlabs-manage-tenants-${WS}`, undefined, (o) => {
      expect(o.roleRef).toEqual(clusterRole('crownlabs-manage-tenants'));
      expect(o.subjects).toEqual(group(`kubernetes:workspace-${WS}:manager`));
    }],
    ['RoleBinding', 'crownlabs-view-templates', WNS, (o) => {
      expect(o.roleRef).toEqual(clusterRole('crownlabs-view-templates'));
      expect(o.subjects).toEqual(group(`kubernetes:workspace-${WS}:user`));
    }],
    ['RoleBinding', 'crownlabs-manage-templates', WNS, (o) => {
      expect(o.roleRef).toEqual(clusterRole('crownlabs-manage-templates'));
      expect(o.subjects).toEqual(group(`kubernetes:workspace-${WS}:manager`));
    }],
  ];
  for (const [kind, name, namespace, check] of rows) {
    it(`renders ${kind} ${name}, labelled for this shard`, () => {
      const o = find(kind, name, namespace);
      expect(o, `${kind} ${name}`).toBeDefined();
      expect(o.metadata.labels).toMatchObject(commonLabels('workspace'));
      check(o);
    });
  }
});
