// Our managed-by label and parent annotation on a real API server (docs/behaviour.md §0.8): the
// ComposerLabelPolicy construct is rendered and applied, and a student with the RBAC our Sandbox
// construct renders (its RoleBinding to the sandbox ClusterRole SharedClusterRoles renders) tries to
// write them in her sandbox. The API server evaluates the policy; its binding is narrowed to this
// run's namespaces, so other tests are not affected.
import type { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ComposerLabelPolicy, notOurNamespaces } from '../../constructs/platform/composer-label-policy.ts';
import { SharedClusterRoles } from '../../constructs/platform/shared-cluster-roles.ts';
import { Sandbox } from '../../constructs/tenant/sandbox.ts';
import { COMPOSER } from '../../src/model/labels.ts';
import { labelledResources } from '../../src/platform/install.ts';
import { apiError, createObject, deleteAll, deleteNamespace, kubeConfigFor, rest, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const RBAC = 'rbac.authorization.k8s.io/v1';
const run = uniqueName('lp');
const student = `${run}-alice`;
const sandboxNs = `sandbox-${student}`;
const tenantNs = `tenant-${student}`;
const controllerNs = `${run}-ctl`;
const controllerUser = `system:serviceaccount:${controllerNs}:controller`;
const gitopsUser = `${run}-gitops`;
const sandboxRole = `${run}-sandbox`;
const DENIED = /ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: the label app\.kubernetes\.io\/managed-by=crownlabs-composer and the annotation composer\.crownlabs\.polito\.it\/parent are written by the crownlabs-composer controller only/;

let installed: KubeObject[] = [];
let alice: KubeConfig;
let controller: KubeConfig;
let gitops: KubeConfig;

const ours = { [COMPOSER.managedByKey]: COMPOSER.managedByValue };
const secret = (name: string, ns: string, meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: ns, ...meta },
  data: { k: Buffer.from('v').toString('base64') },
});
const secretPath = (ns: string, name?: string) => `/api/v1/namespaces/${ns}/secrets${name ? `/${name}` : ''}`;
const createAs = (kc: KubeConfig, obj: KubeObject, dryRun = false) =>
  rest(kc).request('POST', `${obj.kind === 'Secret' ? secretPath(obj.metadata.namespace!) : obj.kind === 'ConfigMap' ? `/api/v1/namespaces/${obj.metadata.namespace}/configmaps` : `/apis/apps/v1/namespaces/${obj.metadata.namespace}/deployments`}`, {
    body: obj,
    query: { dryRun: dryRun ? 'All' : undefined },
  });
const mergePatch = (kc: KubeConfig, ns: string, name: string, body: unknown) => rest(kc).request('PATCH', secretPath(ns, name), { body, contentType: 'application/merge-patch+json' });

beforeAll(async () => {
  const app = new App();
  const chart = new Chart(app, 'label-policy');
  // Only this run's namespaces, with the install's own exclusions (tenant and workspace namespaces).
  const selector = { matchExpressions: [...notOurNamespaces('mydrive-pvcs').matchExpressions, { key: 'kubernetes.io/metadata.name', operator: 'In', values: [sandboxNs, tenantNs] }] };
  new ComposerLabelPolicy(chart, 'p', { resources: labelledResources(), writers: [controllerUser], mydrivePvcsNamespace: 'mydrive-pvcs', namespaceSelector: selector, name: uniqueName('crownlabs-composer-labels') });
  new SharedClusterRoles(chart, 'roles', { sandboxClusterRole: sandboxRole });
  new Sandbox(chart, 'sandbox', { tenantName: student, namespace: sandboxNs, clusterRole: sandboxRole });
  const rendered = chart.toJson() as KubeObject[];
  // Of the shared roles, only the sandbox one (under this run's name): the others are the install's.
  installed = rendered.filter((o) => o.kind !== 'ClusterRole' || o.metadata.name === sandboxRole);
  // The controller may write Secrets in the sandbox; "gitops" (as Argo CD) in both namespaces.
  const grant = (ns: string, user: string) => ({
    apiVersion: RBAC,
    kind: 'RoleBinding',
    metadata: { name: `${user.replace(/[^a-z0-9-]/g, '-').slice(-40)}-edit`, namespace: ns },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: sandboxRole },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
  });
  await createObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: tenantNs, labels: { 'crownlabs.polito.it/type': 'tenant' } } });
  installed.push(grant(sandboxNs, controllerUser), grant(sandboxNs, gitopsUser), grant(tenantNs, gitopsUser));
  await serverSideApply(installed);
  alice = await kubeConfigFor(student, ['crownlabs-tenants']);
  controller = await kubeConfigFor(controllerUser, ['system:serviceaccounts', `system:serviceaccounts:${controllerNs}`]);
  gitops = await kubeConfigFor(gitopsUser, []);
  // The API server loads policies and RBAC through informers: wait until both are in force.
  await waitFor(async () => (await apiError(createAs(alice, secret('probe', sandboxNs, { labels: ours }), true))).message.match(DENIED), { timeoutMs: 30_000, message: 'the policy to be enforced' });
  await waitFor(async () => (await createAs(alice, secret('probe', sandboxNs), true)) !== undefined, { timeoutMs: 30_000, message: "the sandbox role to be in force" });
}, 90_000);

afterAll(async () => {
  if (installed.length) await deleteAll(installed.filter((o) => o.kind !== 'Namespace' && o.metadata.namespace === undefined));
  for (const ns of [sandboxNs, tenantNs]) await deleteNamespace(ns).catch(() => undefined);
});

describe('ComposerLabelPolicy on the real API server', () => {
  it('refuses a student who creates, in her sandbox, objects carrying our managed-by label or parent annotation; she may create them without', async () => {
    for (const meta of [{ labels: ours }, { annotations: { [COMPOSER.parentAnnotation]: 'Tenant/someone' } }, { labels: { ...ours, [COMPOSER.parentIdLabel]: 'x' }, annotations: { [COMPOSER.parentAnnotation]: `Instance/${sandboxNs}/x` } }]) {
      const e = await apiError(createAs(alice, secret('forged', sandboxNs, meta)));
      expect(e.code).toBe(403);
      expect(e.message).toMatch(DENIED);
    }
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'forged', namespace: sandboxNs, labels: ours },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } } },
    } as KubeObject;
    expect((await apiError(createAs(alice, deployment))).message).toMatch(DENIED);
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'forged', namespace: sandboxNs, labels: ours }, data: { a: 'b' } } as KubeObject;
    expect((await apiError(createAs(alice, configMap))).message).toMatch(DENIED);
    // Another tool's managed-by value is none of the policy's business.
    await createAs(alice, secret('helm', sandboxNs, { labels: { [COMPOSER.managedByKey]: 'Helm' } }));
    await createAs(alice, secret('plain', sandboxNs));
    // …and the label cannot be added afterwards.
    expect((await apiError(mergePatch(alice, sandboxNs, 'plain', { metadata: { labels: ours } })))).toMatchObject({ code: 403 });
    expect((await apiError(mergePatch(alice, sandboxNs, 'helm', { metadata: { annotations: { [COMPOSER.parentAnnotation]: 'Tenant/x' } } }))).message).toMatch(DENIED);
  });

  it("lets the controller's ServiceAccount write them there, and the student neither change nor strip what it wrote", async () => {
    await createAs(controller, secret('rendered', sandboxNs, { labels: ours, annotations: { [COMPOSER.parentAnnotation]: `Tenant/${student}` } }));
    await mergePatch(controller, sandboxNs, 'rendered', { data: { k: Buffer.from('w').toString('base64') } });
    for (const body of [{ data: { k: Buffer.from('x'.repeat(1000)).toString('base64') } }, { metadata: { labels: { [COMPOSER.managedByKey]: null } } }, { metadata: { annotations: { [COMPOSER.parentAnnotation]: null } } }, { metadata: { labels: { [COMPOSER.managedByKey]: null }, annotations: { [COMPOSER.parentAnnotation]: null } } }]) {
      const e = await apiError(mergePatch(alice, sandboxNs, 'rendered', body));
      expect(e.code).toBe(403);
      expect(e.message).toMatch(DENIED);
    }
    const live = (await rest().request('GET', secretPath(sandboxNs, 'rendered'))) as KubeObject & { data: { k: string } };
    expect(Buffer.from(live.data.k, 'base64').toString()).toBe('w');
    // A cluster administrator (system:masters) is not checked.
    await createAs(rest().kubeConfig, secret('by-admin', sandboxNs, { labels: ours }));
  });

  it('leaves tenant namespaces to RBAC: Argo CD writes our rendered objects there in gitops mode', async () => {
    await createAs(gitops, secret('synced', tenantNs, { labels: ours, annotations: { [COMPOSER.parentAnnotation]: `Tenant/${student}` } }));
    expect((await apiError(createAs(gitops, secret('synced', sandboxNs, { labels: ours })))).message).toMatch(DENIED);
  });
});
