// A tenant's sandbox (docs/behaviour.md §5.5) on a real API server with RBAC, Pod Security admission,
// quota admission (kube-controller-manager publishes the quota's usage) and our sandbox
// ValidatingAdmissionPolicies: the sandbox objects a Tenant set renders and the sandbox ClusterRole are
// applied for real, then the tenant acts with a client certificate and only the RBAC we render. What she
// may not do is shown by the component that refuses it; what she may do next to it, by a request that
// passes. The policies are renamed for this run and their bindings narrowed to this run's sandbox, the
// ClusterRole gets a name of its own: nothing here affects other tests.
import type { KubeConfig } from '@kubernetes/client-node';
import { App, Chart } from 'cdk8s';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PlatformChart } from '../../constructs/platform/platform-chart.ts';
import { SandboxAdmissionPolicies } from '../../constructs/platform/sandbox-admission-policies.ts';
import { Inventory } from '../../src/inputs/inventory.ts';
import { compose, renderAll } from '../../src/compose/compose.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { testConfig } from '../support/lab.ts';
import { apiError, deleteAll, deleteObject, getObject, kubeConfigFor, rest, serverSideApply, waitFor, type KubeObject } from './cluster.ts';

const SELECTOR = 'crownlabs.polito.it/operator-selector';
const sfx = Math.random().toString(36).slice(2, 7).replace(/[^a-z0-9]/g, 'x');
const TENANT = `sbx-${sfx}`;
const NS = `sandbox-${TENANT}`;
const LAB = `lab-${sfx}.example.org`;
const config: ComposerConfig = testConfig({
  targetLabel: { key: SELECTOR, value: `sbx-${sfx}` },
  namespaceWhitelist: { [SELECTOR]: `sbx-${sfx}` },
  sandboxClusterRole: `crownlabs-sandbox-${sfx}`,
});

let sandbox: KubeObject[] = [];
let policies: KubeObject[] = [];
let role: KubeObject[] = [];
let kc: KubeConfig;

const as = () => rest(kc);
const post = (path: string, body: unknown, dryRun = false) => as().request('POST', path, { body, query: { dryRun: dryRun ? 'All' : undefined } });
const core = (res: string) => `/api/v1/namespaces/${NS}/${res}`;
const apis = (gv: string, res: string) => `/apis/${gv}/namespaces/${NS}/${res}`;
/** The refusal of a request by the RBAC authorizer (not by an admission plugin). */
async function forbiddenByRbac(p: Promise<unknown>): Promise<void> {
  const e = await apiError(p);
  expect(e.code, e.message).toBe(403);
  expect(String(e.body?.message)).toContain(`User "${TENANT}" cannot create resource`);
}
async function deniedByPolicy(p: Promise<unknown>, policy: 'services' | 'ingresses', message: RegExp): Promise<void> {
  const e = await apiError(p);
  expect(e.code, e.message).toBe(403);
  expect(e.message).toMatch(new RegExp(`ValidatingAdmissionPolicy 'crownlabs-sandbox-${sfx}-${policy}' with binding '[^']+' denied request`));
  expect(e.message).toMatch(message);
}

const service = (name: string, spec: Record<string, unknown>) => ({ apiVersion: 'v1', kind: 'Service', metadata: { name }, spec });
const ingress = (name: string, spec: Record<string, unknown>, annotations?: Record<string, string>) => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'Ingress',
  metadata: { name, ...(annotations ? { annotations } : {}) },
  spec,
});
const rule = (host?: string) => ({
  ...(host ? { host } : {}),
  http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } }] },
});
const pod = (name: string, securityContext?: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'registry.example/app:1', ...(securityContext ? { securityContext } : {}) }] },
});

beforeAll(async () => {
  // The sandbox objects of a Tenant set, as the controller would apply them.
  const tenant = {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name: TENANT, labels: { [SELECTOR]: `sbx-${sfx}` } },
    spec: { firstName: 'S', lastName: 'B', email: `${TENANT}@example.org`, createSandbox: true, workspaces: [], publicKeys: [] },
  };
  const { inventory, problems } = Inventory.fromObjects([{ object: tenant as any, source: { file: 'sandbox', document: 0 } }]);
  expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
  const objects = renderAll(compose(inventory, config)).flatMap((s) => s.objects) as KubeObject[];
  sandbox = objects.filter((o) => o.metadata.namespace === NS || (o.kind === 'Namespace' && o.metadata.name === NS));
  expect(sandbox.map((o) => o.kind).sort()).toEqual(['LimitRange', 'Namespace', 'ResourceQuota', 'RoleBinding']);

  role = (new PlatformChart(new App(), 'platform', { sandboxClusterRole: config.sandboxClusterRole }).toJson() as KubeObject[]).filter((o) => o.metadata.name === config.sandboxClusterRole);
  expect(role).toHaveLength(1);

  const chart = new Chart(new App(), 'policies');
  new SandboxAdmissionPolicies(chart, 'p', { labHosts: [LAB], namePrefix: `crownlabs-sandbox-${sfx}` });
  policies = chart.toJson() as KubeObject[];
  for (const b of policies.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding') as any[]) {
    b.spec.matchResources = { namespaceSelector: { matchLabels: { 'crownlabs.polito.it/tenant': TENANT } } };
  }

  await serverSideApply([...role, ...policies]);
  await serverSideApply(sandbox.filter((o) => o.kind === 'Namespace'));
  await serverSideApply(sandbox.filter((o) => o.kind !== 'Namespace'));
  kc = await kubeConfigFor(TENANT, []);

  // Quota admission refuses what a quota without published usage covers: wait for kube-controller-manager.
  const rq = sandbox.find((o) => o.kind === 'ResourceQuota')!;
  const hard = Object.keys((rq.spec as { hard: Record<string, string> }).hard);
  await waitFor(async () => {
    const live = await getObject<any>({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: rq.metadata.name, namespace: NS } });
    return hard.every((k) => live?.status?.used?.[k] !== undefined);
  }, { timeoutMs: 60_000, message: 'the sandbox quota usage' });
  // RBAC and policies are read through informers: wait until both are in force.
  await waitFor(async () => (await post(core('services'), service('probe', { ports: [{ port: 80 }] }), true)) !== undefined, { message: 'the sandbox RBAC' });
  // Each policy is in force once it denies one of two probes (two, so that the tests still run when one check is broken).
  const denies = async (path: string, bodies: unknown[]) => {
    for (const b of bodies) {
      try {
        await post(path, b, true);
      } catch (e) {
        if (/denied request/.test(String(e))) return true;
      }
    }
    return false;
  };
  await waitFor(
    async () =>
      (await denies(core('services'), [service('probe', { type: 'ExternalName', externalName: 'x.example' }), service('probe', { ports: [{ port: 80 }], externalIPs: ['10.0.0.1'] })])) &&
      (await denies(apis('networking.k8s.io/v1', 'ingresses'), [ingress('probe', { rules: [rule(LAB)] }), ingress('probe', { rules: [rule()] })])),
    { timeoutMs: 30_000, message: 'the sandbox policies to be enforced' },
  );
}, 120_000);

afterAll(async () => {
  if (policies.length) await deleteAll(policies);
  if (sandbox.length) await deleteObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  if (role.length) await deleteAll(role);
});

describe('the sandbox role', () => {
  it('lets the tenant create Services and Deployments, but refuses Endpoints, EndpointSlices and DaemonSets', async () => {
    await post(core('services'), service('web', { ports: [{ port: 80 }] }));
    await post(apis('apps/v1', 'deployments'), {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } },
    });
    // A selector-less Service with hand-written endpoints at another tenant's pod: the relay.
    await post(core('services'), service('relay', { ports: [{ port: 6080 }] }));
    await forbiddenByRbac(post(core('endpoints'), { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'relay' }, subsets: [{ addresses: [{ ip: '10.0.0.42' }], ports: [{ port: 6080 }] }] }));
    await forbiddenByRbac(
      post(apis('discovery.k8s.io/v1', 'endpointslices'), {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'relay-1', labels: { 'kubernetes.io/service-name': 'relay' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: ['10.0.0.42'] }],
        ports: [{ port: 6080 }],
      }),
    );
    await forbiddenByRbac(
      post(apis('apps/v1', 'daemonsets'), {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'everywhere' },
        spec: { selector: { matchLabels: { app: 'd' } }, template: { metadata: { labels: { app: 'd' } }, spec: { containers: [{ name: 'c', image: 'registry.example/app:1' }] } } },
      }),
    );
  });
});

describe('Pod Security in the sandbox', () => {
  it('admits a plain pod and refuses a privileged or host-network one (baseline)', async () => {
    await post(core('pods'), pod('plain'));
    for (const [name, body] of [
      ['privileged', pod('privileged', { privileged: true })],
      ['host-network', { ...pod('host-network'), spec: { ...pod('x').spec, hostNetwork: true } }],
    ] as const) {
      const e = await apiError(post(core('pods'), body));
      expect(e.code, name).toBe(403);
      expect(e.message, name).toMatch(/violates PodSecurity "baseline:latest"/);
    }
  });
});

describe('the sandbox admission policies', () => {
  it('refuse ExternalName Services and externalIPs, and admit ClusterIP Services', async () => {
    await post(core('services'), service('plain', { ports: [{ port: 8080 }] }), true);
    // ingress-nginx would follow this name to another tenant's Service.
    await deniedByPolicy(post(core('services'), service('other', { type: 'ExternalName', externalName: `web.tenant-victim-${sfx}.svc.cluster.local` })), 'services', /may not be of type ExternalName/);
    await deniedByPolicy(post(core('services'), service('capture', { ports: [{ port: 80 }], externalIPs: ['10.0.0.42'] })), 'services', /may not set externalIPs/);
    // Nor can an existing Service be turned into one.
    const e = await apiError(as().request('PATCH', core('services/web'), { body: { spec: { type: 'ExternalName', externalName: 'x.example', selector: null } }, contentType: 'application/merge-patch+json' }));
    expect(e.message).toMatch(/may not be of type ExternalName/);
  });

  it('refuse Ingresses on the lab host, under it or covering it, and admit one on a host of her own', async () => {
    await post(apis('networking.k8s.io/v1', 'ingresses'), ingress('own', { rules: [rule(`mine-${sfx}.students.example.net`)] }));
    for (const host of [LAB, `exam.${LAB}`, `*.${LAB}`, '*.example.org']) {
      await deniedByPolicy(post(apis('networking.k8s.io/v1', 'ingresses'), ingress('capture', { rules: [rule(`mine-${sfx}.students.example.net`), rule(host)] })), 'ingresses', /may not claim a host of the lab/);
    }
    // A similar name that is not under the lab host is hers.
    await post(apis('networking.k8s.io/v1', 'ingresses'), ingress('similar', { rules: [rule(`x${LAB}`)] }), true);
  });

  it('refuse hostless rules, default backends and annotations that relay the ingress controller', async () => {
    await deniedByPolicy(post(apis('networking.k8s.io/v1', 'ingresses'), ingress('catch-all', { rules: [rule()] })), 'ingresses', /needs a host in every rule/);
    await deniedByPolicy(post(apis('networking.k8s.io/v1', 'ingresses'), ingress('default', { defaultBackend: { service: { name: 'web', port: { number: 80 } } } })), 'ingresses', /needs a host in every rule and no defaultBackend/);
    const own = { rules: [rule(`mine-${sfx}.students.example.net`)] };
    for (const a of ['nginx.ingress.kubernetes.io/auth-url', 'nginx.ingress.kubernetes.io/mirror-target', 'nginx.ingress.kubernetes.io/configuration-snippet']) {
      await deniedByPolicy(post(apis('networking.k8s.io/v1', 'ingresses'), ingress('annotated', own, { [a]: 'http://10.0.0.42:6080/' })), 'ingresses', /may not set nginx\.ingress\.kubernetes\.io\/auth-url/);
    }
    await post(apis('networking.k8s.io/v1', 'ingresses'), ingress('timeouts', own, { 'nginx.ingress.kubernetes.io/proxy-read-timeout': '60' }), true);
  });

  it('do not apply to a cluster administrator', async () => {
    await rest().request('POST', core('services'), { body: service('admin', { type: 'ExternalName', externalName: 'x.example' }), query: { dryRun: 'All' } });
  });
});

describe('the sandbox quota', () => {
  it('refuses the Secret past count/secrets', async () => {
    const live = await getObject<any>({ apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'sandbox-resource-quota', namespace: NS } });
    const hard = Number(live.spec.hard['count/secrets']);
    const used = Number(live.status.used['count/secrets']);
    expect(hard).toBe(50);
    const secret = (i: number) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: `s-${i}` }, stringData: { v: String(i) } });
    // Quota admission counts each create against the published usage, so the limit holds at once.
    for (let i = used; i < hard; i++) await post(core('secrets'), secret(i));
    const e = await apiError(post(core('secrets'), secret(hard)));
    expect(e.code).toBe(403);
    expect(e.message).toMatch(/exceeded quota: sandbox-resource-quota, requested: count\/secrets=1, used: count\/secrets=50, limited: count\/secrets=50/);
  });
});
