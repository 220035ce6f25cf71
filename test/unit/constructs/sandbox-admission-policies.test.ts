import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { SANDBOX_NAMESPACE_SELECTOR, SANDBOX_REFUSED_INGRESS_ANNOTATIONS, SandboxAdmissionPolicies } from '../../../constructs/platform/sandbox-admission-policies.ts';
import { Sandbox } from '../../../constructs/tenant/sandbox.ts';
import { defaultConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { renderPlatform } from '../../../src/platform/install.ts';
import { labHostsOf } from '../../../src/platform/lab-hosts.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function synth(props: ConstructorParameters<typeof SandboxAdmissionPolicies>[2]): Any[] {
  const chart = Testing.chart();
  new SandboxAdmissionPolicies(chart, 'p', props);
  return Testing.synth(chart);
}
const policyOf = (objects: Any[], name: string) => objects.find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === name);

describe('SandboxAdmissionPolicies: what a sandbox may not create', () => {
  const objects = synth({ labHosts: ['lab.example', 'auth.other.example', 'lab.example'] });

  it('a Services and an Ingresses policy, each denied through its own binding, failing closed', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ValidatingAdmissionPolicy/crownlabs-sandbox-services',
      'ValidatingAdmissionPolicyBinding/crownlabs-sandbox-services',
      'ValidatingAdmissionPolicy/crownlabs-sandbox-ingresses',
      'ValidatingAdmissionPolicyBinding/crownlabs-sandbox-ingresses',
    ]);
    for (const o of objects) expect(o.apiVersion).toBe('admissionregistration.k8s.io/v1');
    for (const b of objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding')) expect(b.spec).toEqual({ policyName: b.metadata.name, validationActions: ['Deny'] });
    expect(policyOf(objects, 'crownlabs-sandbox-services').spec.matchConstraints.resourceRules).toEqual([{ apiGroups: [''], resources: ['services'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'] }]);
    expect(policyOf(objects, 'crownlabs-sandbox-ingresses').spec.matchConstraints.resourceRules).toEqual([{ apiGroups: ['networking.k8s.io'], resources: ['ingresses'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'] }]);
  });

  it('applies only in namespaces carrying the labels every sandbox namespace gets, and not to system:masters', () => {
    const chart = Testing.chart();
    new Sandbox(chart, 's', { tenantName: 't', namespace: 'sandbox-t', clusterRole: 'r' });
    const nsLabels = Testing.synth(chart).find((o: Any) => o.kind === 'Namespace').metadata.labels;
    expect(nsLabels).toMatchObject(SANDBOX_NAMESPACE_SELECTOR.matchLabels);
    for (const p of objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy')) {
      expect(p.spec.failurePolicy).toBe('Fail');
      expect(p.spec.matchConstraints.namespaceSelector).toEqual({ matchLabels: { 'crownlabs.polito.it/type': 'sandbox' } });
      expect(p.spec.matchConditions).toEqual([{ name: 'not-a-bypass-group', expression: '!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["system:masters"]))' }]);
    }
    const other = synth({ labHosts: [], bypassGroups: ['lab:admins'], namePrefix: 'x' });
    expect(policyOf(other, 'x-services').spec.matchConditions[0].expression).toContain('["lab:admins"]');
  });

  it('refuses ExternalName Services and externalIPs', () => {
    const v = policyOf(objects, 'crownlabs-sandbox-services').spec.validations;
    expect(v.map((x: Any) => x.expression)).toEqual(["!has(object.spec.type) || object.spec.type != 'ExternalName'", '!has(object.spec.externalIPs) || size(object.spec.externalIPs) == 0']);
    for (const x of v) expect(x.reason).toBe('Forbidden');
  });

  it('refuses Ingresses on the lab hosts (deduplicated, in order), hostless rules, default backends and relaying annotations', () => {
    const p = policyOf(objects, 'crownlabs-sandbox-ingresses');
    expect(p.spec.variables[0]).toEqual({ name: 'lab', expression: '["auth.other.example", "lab.example"]' });
    const [hosts, hostless, annotations] = p.spec.validations;
    expect(hosts.expression).toContain("r.host.endsWith('.' + l)");
    expect(hosts.expression).toContain("r.host.startsWith('*.')");
    expect(hosts.message).toContain('auth.other.example, lab.example');
    expect(hostless.expression).toBe('variables.rules.all(r, has(r.host)) && !has(object.spec.defaultBackend)');
    for (const a of SANDBOX_REFUSED_INGRESS_ANNOTATIONS) expect(annotations.expression).toContain(JSON.stringify(a));
    expect(SANDBOX_REFUSED_INGRESS_ANNOTATIONS).toEqual(expect.arrayContaining(['nginx.ingress.kubernetes.io/auth-url', 'nginx.ingress.kubernetes.io/configuration-snippet']));
  });
});

describe('the lab hosts of the install', () => {
  const config = (o: Partial<ComposerConfig> = {}): ComposerConfig => ({ ...defaultConfig(), ...o });

  it('the instances host, and the hosts of the shared proxy, the OIDC issuer and Keycloak', () => {
    expect(labHostsOf(config())).toEqual(['auth.crownlabs.polito.it', 'crownlabs.polito.it']);
    expect(labHostsOf(config({ websiteBaseUrl: 'Lab.Example', instancesAuthUrl: 'https://proxy.example:8443/oauth2', keycloakUrl: 'https://10.0.0.1/', oidcIssuerUrl: 'https://sso.example/realms/r' }))).toEqual([
      'lab.example',
      'proxy.example',
      'sso.example',
    ]);
  });

  it('the rendered install holds both sandbox policies, with the configured lab hosts', () => {
    const objects = renderPlatform(config({ websiteBaseUrl: 'lab.example', instancesAuthUrl: 'https://auth.lab.example/oauth2' })) as Any[];
    const p = policyOf(objects, 'crownlabs-sandbox-ingresses');
    expect(p.spec.variables[0].expression).toBe('["auth.crownlabs.polito.it", "auth.lab.example", "lab.example"]');
    expect(policyOf(objects, 'crownlabs-sandbox-services')).toBeDefined();
    expect(objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding').map((b) => b.metadata.name)).toEqual(expect.arrayContaining(['crownlabs-sandbox-services', 'crownlabs-sandbox-ingresses']));
  });
});
