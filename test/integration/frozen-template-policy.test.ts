// The frozen Template spec of an Instance (docs/behaviour.md Decision 3) on a real API server: the
// FrozenTemplatePolicy construct is rendered and applied, and a tenant who may edit her own
// Instances (as upstream's crownlabs-manage-instances role allows) tries to write the annotation the
// controller renders from. The API server itself evaluates the policy. It is narrowed to this
// run's namespace with one more match condition, so other tests' controllers are not affected.
import type { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FrozenTemplatePolicy } from '../../constructs/platform/frozen-template-policy.ts';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { apiError, createNamespace, deleteAll, deleteNamespace, kubeConfigFor, rest, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const CL = 'crownlabs.polito.it/v1alpha2';
const RBAC = 'rbac.authorization.k8s.io/v1';
const FORGED = JSON.stringify({ environmentList: [{ name: 'x', image: 'evil.example/miner', environmentType: 'Container', resources: { cpu: 64, memory: '512G', reservedCPUPercentage: 100 } }] });

let ns: string;
let policy: KubeObject[];
let tenant: KubeConfig;
let controller: KubeConfig;
const controllerUser = () => `system:serviceaccount:${ns}:controller`;

const instance = (name: string, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: CL,
  kind: 'Instance',
  metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}) },
  spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: 'workspace-w' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'alice' }, running: true },
});
const path = (name?: string) => `/apis/${CL}/namespaces/${ns}/instances${name ? `/${name}` : ''}`;
const create = (kc: KubeConfig, obj: KubeObject, dryRun = false) => rest(kc).request('POST', path(), { body: obj, query: { dryRun: dryRun ? 'All' : undefined } });
const mergePatch = (kc: KubeConfig, name: string, body: unknown) => rest(kc).request('PATCH', path(name), { body, contentType: 'application/merge-patch+json' });
type Annotated = KubeObject & { metadata: { annotations?: Record<string, string> } };
const annotation = async (name: string) => ((await rest().request('GET', path(name))) as Annotated).metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION];
const DENIED = /ValidatingAdmissionPolicy 'crownlabs-instance-frozen-template-[^']+' with binding '[^']+' denied request: metadata\.annotations\["composer\.crownlabs\.polito\.it\/template-spec"\] is written by the crownlabs-composer controller only/;

beforeAll(async () => {
  ns = await createNamespace('frozen');
  const app = new App();
  const chart = new Chart(app, 'policy');
  new FrozenTemplatePolicy(chart, 'p', { writers: [controllerUser()], name: uniqueName('crownlabs-instance-frozen-template') });
  policy = chart.toJson() as KubeObject[];
  const vap = policy.find((o) => o.kind === 'ValidatingAdmissionPolicy') as KubeObject & { spec: { matchConditions: unknown[] } };
  vap.spec.matchConditions.push({ name: 'this-test-only', expression: `request.namespace == '${ns}'` });
  // Both may edit Instances in the namespace, as a tenant may in her own.
  const role = { apiVersion: RBAC, kind: 'Role', metadata: { name: 'edit-instances', namespace: ns }, rules: [{ apiGroups: ['crownlabs.polito.it'], resources: ['instances'], verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'] }] };
  const binding = (user: string) => ({ apiVersion: RBAC, kind: 'RoleBinding', metadata: { name: `edit-instances-${user.replace(/[^a-z0-9-]/g, '-')}`, namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'edit-instances' }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] });
  await serverSideApply([...policy, role, binding('alice'), binding(controllerUser())] as KubeObject[]);
  tenant = await kubeConfigFor('alice', ['crownlabs-tenants']);
  controller = await kubeConfigFor(controllerUser(), ['system:serviceaccounts', `system:serviceaccounts:${ns}`]);
  // The API server loads policies and RBAC through informers: wait until both are in force.
  await waitFor(async () => (await apiError(create(tenant, instance('probe', { [FROZEN_TEMPLATE_ANNOTATION]: FORGED }), true))).message.match(DENIED), { timeoutMs: 30_000, message: 'the policy to be enforced' });
}, 60_000);

afterAll(async () => {
  if (policy) await deleteAll(policy);
  if (ns) await deleteNamespace(ns);
});

describe('FrozenTemplatePolicy on the real API server', () => {
  it('refuses a tenant who creates an Instance with a frozen Template spec of her choosing', async () => {
    const e = await apiError(create(tenant, instance('forged', { [FROZEN_TEMPLATE_ANNOTATION]: FORGED })));
    expect(e.code).toBe(403);
    expect(e.message).toMatch(DENIED);
  });

  it('lets the tenant create and edit everything else, and only the controller write the annotation', async () => {
    await create(tenant, instance('mine', { 'example.org/note': 'hi' }));
    await mergePatch(tenant, 'mine', { spec: { running: false }, metadata: { annotations: { 'example.org/note': 'changed' } } });

    // The controller freezes the Template spec it renders from.
    const frozen = JSON.stringify({ environmentList: [{ name: 'e', image: 'registry.example/lab:1', environmentType: 'Container' }] });
    await mergePatch(controller, 'mine', { metadata: { annotations: { [FROZEN_TEMPLATE_ANNOTATION]: frozen } } });
    expect(await annotation('mine')).toBe(frozen);

    // The tenant can neither replace nor remove it, by patch or by update; other edits still pass.
    for (const attempt of [
      () => mergePatch(tenant, 'mine', { metadata: { annotations: { [FROZEN_TEMPLATE_ANNOTATION]: FORGED } } }),
      () => mergePatch(tenant, 'mine', { metadata: { annotations: { [FROZEN_TEMPLATE_ANNOTATION]: null } } }),
      async () => {
        const live = (await rest(tenant).request('GET', path('mine'))) as Annotated;
        live.metadata.annotations = { ...live.metadata.annotations, [FROZEN_TEMPLATE_ANNOTATION]: FORGED };
        return rest(tenant).request('PUT', path('mine'), { body: live });
      },
    ]) {
      const e = await apiError(attempt());
      expect(e.code).toBe(403);
      expect(e.message).toMatch(DENIED);
    }
    expect(await annotation('mine')).toBe(frozen);
    await mergePatch(tenant, 'mine', { spec: { running: true } });

    // A cluster administrator (system:masters) is not checked: a restore from a backup works.
    await mergePatch(rest().kubeConfig, 'mine', { metadata: { annotations: { [FROZEN_TEMPLATE_ANNOTATION]: null } } });
    expect(await annotation('mine')).toBeUndefined();
  });
});
