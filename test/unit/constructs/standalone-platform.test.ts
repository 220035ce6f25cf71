// The install's constructs used on their own in cdk8s' test chart (Testing.chart()), with props
// written here: what each renders and what its optional props change. platform.test.ts (under
// test/unit/platform) covers the whole install as `crownlabs manifests` renders it.
import { Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { BastionDeployment } from '../../../constructs/bastion/bastion-deployment.ts';
import { BastionRbac } from '../../../constructs/bastion/bastion-rbac.ts';
import { BastionService } from '../../../constructs/bastion/bastion-service.ts';
import { ControllerRbac } from '../../../constructs/platform/controller-rbac.ts';
import { ControllerShard, WEBHOOK_TLS_SECRET, type WebhookWiring } from '../../../constructs/platform/controller-shard.ts';
import { CrownLabsCrds } from '../../../constructs/platform/crownlabs-crds.ts';
import { FrozenTemplatePolicy } from '../../../constructs/platform/frozen-template-policy.ts';
import { InstanceAdmissionPolicy } from '../../../constructs/platform/instance-admission-policy.ts';
import { MAX_INSTANCE_NAME_LENGTH, RESERVED_INSTANCE_NAMES } from '../../../src/model/instance-names.ts';
import { RenderedObjectValidator } from '../../../src/validate/validator.ts';
import { ImageListUpdater } from '../../../constructs/platform/image-list-updater.ts';
import { MetricsServiceMonitor } from '../../../constructs/platform/metrics-service-monitor.ts';
import { PlatformBastion } from '../../../constructs/platform/platform-bastion.ts';
import { SharedClusterRoles } from '../../../constructs/platform/shared-cluster-roles.ts';
import { TenantWebhooks } from '../../../constructs/platform/tenant-webhooks.ts';
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const ids = (objects: Any[]) => objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
function synth(build: (chart: ReturnType<typeof Testing.chart>) => void): Any[] {
  const chart = Testing.chart();
  build(chart);
  return Testing.synth(chart);
}
const part = { 'app.kubernetes.io/part-of': 'crownlabs' };
const rule = { apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['get'] };

describe('InstanceAdmissionPolicy', () => {
  const writer = 'system:serviceaccount:ops:ctl';
  it('renders a policy on Instance writes with its Deny binding, exempting the controller and system:masters, that the vendored schemas accept', () => {
    const objects = synth((c) => new InstanceAdmissionPolicy(c, 'p', { writers: [writer] }));
    expect(ids(objects)).toEqual(['ValidatingAdmissionPolicy//crownlabs-instance-admission', 'ValidatingAdmissionPolicyBinding//crownlabs-instance-admission']);
    const [policy, binding] = objects;
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['instances'] }]);
    expect(policy.spec.matchConditions.map((m: Any) => m.expression)).toEqual([
      `!(request.userInfo.username in ["${writer}"])`,
      '!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["system:masters"]))',
    ]);
    expect(binding.spec).toEqual({ policyName: 'crownlabs-instance-admission', validationActions: ['Deny'] });
    const validator = new RenderedObjectValidator({ cacheDir: false });
    expect(objects.flatMap((o) => validator.validate(o))).toEqual([]);
  });
  it("checks the name's length and reservation on create, the owner and the Template on create and when they change", () => {
    const [policy] = synth((c) => new InstanceAdmissionPolicy(c, 'p', { writers: [writer] }));
    const [length, reserved, owner, template] = policy.spec.validations.map((v: Any) => v.expression);
    expect(length).toBe(`!variables.creating || size(object.metadata.name) <= ${MAX_INSTANCE_NAME_LENGTH}`);
    expect(reserved).toContain(`!variables.creating || !(object.metadata.name.replace('.', '-') in [${RESERVED_INSTANCE_NAMES.map((n) => `"${n}"`).join(', ')}])`);
    expect(owner).toBe('!variables.tenantChanged || variables.tenantFits');
    expect(template).toBe("!variables.templateChanged || authorizer.group('crownlabs.polito.it').resource('templates').namespace(variables.templateNamespace).name(variables.templateName).check('get').allowed()");
    const vars = Object.fromEntries(policy.spec.variables.map((v: Any) => [v.name, v.expression]));
    expect(vars.owner).toContain('namespaceObject.metadata.labels["crownlabs.polito.it/name"]');
    expect(vars.tenantChanged).toContain('oldObject.spec["tenant.crownlabs.polito.it/TenantRef"].name != variables.tenant');
    expect(vars.templateChanged).toContain('oldObject.spec["template.crownlabs.polito.it/TemplateRef"].name != variables.templateName');
  });
  it('takes other bypass groups, a name and labels; it needs a writer', () => {
    const [policy, binding] = synth((c) => new InstanceAdmissionPolicy(c, 'p', { writers: [writer], bypassGroups: ['velero'], name: 'n', labels: part }));
    expect(policy.spec.matchConditions[1].expression).toContain('g in ["velero"]');
    expect([policy.metadata, binding.metadata, binding.spec.policyName]).toEqual([{ name: 'n', labels: part }, { name: 'n', labels: part }, 'n']);
    expect(() => synth((c) => new InstanceAdmissionPolicy(c, 'p', { writers: [] }))).toThrow(/at least one writer/);
  });
});

describe('CrownLabsCrds', () => {
  it('renders the CRDs it is given, in order, each protected from Argo CD delete and prune, the rest untouched', () => {
    const crd = (name: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name, annotations: { 'controller-gen.kubebuilder.io/version': 'v0.17' } },
      spec: { group: 'crownlabs.polito.it', names: { kind: name } },
    });
    const objects = synth((c) => new CrownLabsCrds(c, 'crds', { crds: [crd('tenants.crownlabs.polito.it'), crd('instances.crownlabs.polito.it')] }));
    expect(objects.map((o) => o.metadata.name)).toEqual(['tenants.crownlabs.polito.it', 'instances.crownlabs.polito.it']);
    expect(objects[0].metadata.annotations).toEqual({ 'controller-gen.kubebuilder.io/version': 'v0.17', 'argocd.argoproj.io/sync-options': 'Delete=false,Prune=false' });
    expect(objects[1].spec).toEqual({ group: 'crownlabs.polito.it', names: { kind: 'instances.crownlabs.polito.it' } });
  });
});

describe('FrozenTemplatePolicy', () => {
  const writer = 'system:serviceaccount:ops:ctl';
  it('renders a ValidatingAdmissionPolicy and its Deny binding that the vendored schemas accept', () => {
    const objects = synth((c) => new FrozenTemplatePolicy(c, 'p', { writers: [writer] }));
    expect(ids(objects)).toEqual(['ValidatingAdmissionPolicy//crownlabs-instance-frozen-template', 'ValidatingAdmissionPolicyBinding//crownlabs-instance-frozen-template']);
    const [policy, binding] = objects;
    expect(policy.spec.matchConstraints.resourceRules).toEqual([{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['instances'] }]);
    expect(policy.spec.matchConditions.map((m: Any) => m.expression)).toEqual([
      `!(request.userInfo.username in ["${writer}"])`,
      '!(has(request.userInfo.groups) && request.userInfo.groups.exists(g, g in ["system:masters"]))',
    ]);
    expect(policy.spec.validations).toEqual([{ expression: 'variables.frozen == variables.before', reason: 'Forbidden', message: expect.stringContaining('composer.crownlabs.polito.it/template-spec') }]);
    expect(binding.spec).toEqual({ policyName: 'crownlabs-instance-frozen-template', validationActions: ['Deny'] });
    const validator = new RenderedObjectValidator({ cacheDir: false });
    expect(objects.flatMap((o) => validator.validate(o))).toEqual([]);
  });
  it('takes other bypass groups, a name and labels; it needs a writer', () => {
    const [policy, binding] = synth((c) => new FrozenTemplatePolicy(c, 'p', { writers: [writer, 'system:serviceaccount:ops:other'], bypassGroups: ['velero', 'admins'], name: 'n', labels: part }));
    expect(policy.spec.matchConditions[0].expression).toBe(`!(request.userInfo.username in ["${writer}", "system:serviceaccount:ops:other"])`);
    expect(policy.spec.matchConditions[1].expression).toContain('g in ["velero", "admins"]');
    expect([policy.metadata, binding.metadata, binding.spec.policyName]).toEqual([{ name: 'n', labels: part }, { name: 'n', labels: part }, 'n']);
    expect(() => synth((c) => new FrozenTemplatePolicy(c, 'p', { writers: [] }))).toThrow(/at least one writer/);
  });
});

describe('ControllerRbac', () => {
  it('one ServiceAccount bound to its ClusterRole and, in its namespace, to the leader-election Role', () => {
    const objects = synth((c) => new ControllerRbac(c, 'rbac', { name: 'ctl', namespace: 'ns', labels: part, rules: [rule], leaseRules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] }] }));
    expect(ids(objects)).toEqual(['ServiceAccount/ns/ctl', 'ClusterRole//ctl', 'ClusterRoleBinding//ctl', 'Role/ns/ctl-leader-election', 'RoleBinding/ns/ctl-leader-election']);
    expect(objects[1].rules).toEqual([rule]);
    expect(objects[3].rules[0].resources).toEqual(['leases']);
    for (const binding of [objects[2], objects[4]]) expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'ctl', namespace: 'ns' }]);
    expect(objects[4].roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'ctl-leader-election' });
  });
});

describe('ControllerShard', () => {
  const props = {
    namespace: 'crownlabs-system',
    name: 'crownlabs-controller',
    shard: 'production',
    targetLabelKey: 'crownlabs.polito.it/operator-selector',
    image: 'crownlabs/composer:v1',
    serviceAccountName: 'crownlabs-controller',
    labels: part,
    replicas: 2,
    resources: { cpu: '200m', memory: '512Mi' },
    configMapName: 'cfg',
    secretName: 'secrets',
    leaseName: 'lease-production',
  };
  const container = (objects: Any[]) => objects[0].spec.template.spec.containers[0];

  it('a leader-elected, locked-down Deployment, its Service and PodDisruptionBudget, all on the shard\'s selector', () => {
    const objects = synth((c) => new ControllerShard(c, 's', props));
    expect(ids(objects)).toEqual([
      'Deployment/crownlabs-system/crownlabs-controller-production',
      'Service/crownlabs-system/crownlabs-controller-production',
      'PodDisruptionBudget/crownlabs-system/crownlabs-controller-production',
    ]);
    const selector = { 'app.kubernetes.io/name': 'crownlabs-controller', 'app.kubernetes.io/instance': 'production' };
    expect(objects[0].spec.selector.matchLabels).toEqual(selector);
    expect(objects[1].spec.selector).toEqual(selector);
    expect(objects[2].spec).toEqual({ minAvailable: 1, selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' });
    expect(objects[0].metadata.labels).toEqual({ ...part, ...selector, 'app.kubernetes.io/component': 'controller' });
    expect(objects[0].spec.replicas).toBe(2);
    const pod = objects[0].spec.template.spec;
    expect(pod.serviceAccountName).toBe('crownlabs-controller');
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container(objects).securityContext).toEqual({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    expect(container(objects).resources).toEqual({ requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '512Mi' } });
    expect(pod.volumes[0]).toEqual({ name: 'config', configMap: { name: 'cfg' } });
  });

  it('without extraArgs and webhooks: only the target label and leader election, the webhook server off, no webhook volume', () => {
    const objects = synth((c) => new ControllerShard(c, 's', props));
    expect(container(objects).args).toEqual([
      'controller', '--config', '/etc/crownlabs/config.yaml', '--target-label', 'crownlabs.polito.it/operator-selector=production',
      '--webhook-port', '0',
      '--enable-leader-election', '--leader-election-id', 'lease-production', '--leader-election-namespace', 'crownlabs-system',
      '--metrics-addr', ':8080', '--metrics-secure', '--health-probe-addr', ':8081',
    ]);
    expect(objects[0].spec.template.spec.volumes.map((v: Any) => v.name)).toEqual(['config', 'tmp']);
  });

  it('with extraArgs and webhooks: the flags after the target label, the certificate mounted, the configurations rendered once for the shard\'s Service', () => {
    const wired: WebhookWiring[] = [];
    const objects = synth((c) =>
      new ControllerShard(c, 's', {
        ...props,
        extraArgs: ['--enable-instance-termination'],
        webhooks: { certificate: 'crownlabs-system/webhooks', render: (scope, id, w) => { wired.push(w); new TenantWebhooks(scope, id, w); } },
      }),
    );
    const args = container(objects).args;
    expect(args.slice(5, 8)).toEqual(['--enable-instance-termination', '--webhook-cert-dir', '/etc/crownlabs/webhook-certs']);
    expect(objects[0].spec.template.spec.volumes[2]).toEqual({ name: 'webhook-certs', secret: { secretName: WEBHOOK_TLS_SECRET } });
    expect(wired).toEqual([
      {
        service: { namespace: 'crownlabs-system', name: 'crownlabs-controller-production', port: 443 },
        namespaceLabel: { key: 'crownlabs.polito.it/operator-selector', value: 'production' },
        certManagerCertificate: 'crownlabs-system/webhooks',
        namePrefix: 'crownlabs-controller-production-',
      },
    ]);
    expect(ids(objects).slice(3)).toEqual(['MutatingWebhookConfiguration//crownlabs-controller-production-tenant-webhook', 'ValidatingWebhookConfiguration//crownlabs-controller-production-tenant-webhook']);
  });
});

describe('ImageListUpdater', () => {
  it('`crownlabs imagelist` with its flags and optional registry credentials, under its own ClusterRole', () => {
    const objects = synth((c) =>
      new ImageListUpdater(c, 'il', { namespace: 'ns', image: 'img', labels: part, secretName: 'secrets', registryUrl: 'https://r.example', imageListName: 'images', advertisedRegistryName: 'registry.example', updateIntervalSeconds: 60, rules: [rule] }),
    );
    expect(ids(objects)).toEqual(['ServiceAccount/ns/crownlabs-imagelist-updater', 'ClusterRole//crownlabs-imagelist-updater', 'ClusterRoleBinding//crownlabs-imagelist-updater', 'Deployment/ns/crownlabs-imagelist-updater']);
    expect(objects[1].rules).toEqual([rule]);
    const c = objects[3].spec.template.spec.containers[0];
    expect(c.args).toEqual(['imagelist', '--advertised-registry-name', 'registry.example', '--image-list-name', 'images', '--registry-url', 'https://r.example', '--update-interval', '60']);
    expect(c.env.map((e: Any) => [e.name, e.valueFrom.secretKeyRef])).toEqual([
      ['CROWNLABS_REGISTRY_USERNAME', { name: 'secrets', key: 'registryUsername', optional: true }],
      ['CROWNLABS_REGISTRY_PASSWORD', { name: 'secrets', key: 'registryPassword', optional: true }],
    ]);
    expect(objects[3].spec.replicas).toBe(1);
  });
});

describe('PlatformBastion and MetricsServiceMonitor', () => {
  it('the bastion in its own namespace, hardened, with a metrics Service and a PodDisruptionBudget', () => {
    const objects = synth((c) => new PlatformBastion(c, 'b', { sshdImage: 'sshd', composerImage: 'img', labels: part, rules: [rule] }));
    expect(ids(objects)).toEqual([
      'Namespace//crownlabs-bastion',
      'ServiceAccount/crownlabs-bastion/ssh-bastion',
      'ClusterRole//ssh-bastion',
      'ClusterRoleBinding//ssh-bastion',
      'Deployment/crownlabs-bastion/ssh-bastion',
      'Service/crownlabs-bastion/ssh-bastion',
      'Service/crownlabs-bastion/ssh-bastion-metrics',
      'PodDisruptionBudget/crownlabs-bastion/ssh-bastion',
    ]);
    expect(objects[2].rules).toEqual([rule]);
    // Tenant NetworkPolicies admit the bastion by this label (§5.4 row 7): it must reach the VMs.
    expect(objects[0].metadata.labels).toEqual({ ...part, 'crownlabs.polito.it/allow-instance-access': 'true' });
    expect(objects[4].spec.template.spec.securityContext).toEqual({ seccompProfile: { type: 'RuntimeDefault' }, fsGroup: 10001 });
    expect(objects[6].spec.ports).toEqual([{ name: 'metrics', port: 9090, targetPort: 'metrics', protocol: 'TCP' }]);
    expect(objects[7].spec.maxUnavailable).toBe(1);
  });

  it('the ServiceMonitor selects Services by the given labels in the given namespaces; the secure port over HTTPS with its bearer token', () => {
    const [sm] = synth((c) => new MetricsServiceMonitor(c, 'm', { namespace: 'ns', labels: part, namespaces: ['ns', 'crownlabs-bastion'], securePort: 'https-metrics' }));
    expect(sm.kind).toBe('ServiceMonitor');
    expect(sm.spec).toEqual({
      selector: { matchLabels: part },
      namespaceSelector: { matchNames: ['ns', 'crownlabs-bastion'] },
      endpoints: [
        { port: 'https-metrics', interval: '30s', scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token', tlsConfig: { insecureSkipVerify: true } },
        { port: 'metrics', interval: '30s' },
      ],
    });
  });
});

describe('bastion constructs on their own', () => {
  const base = { name: 'b', namespace: 'ns', labels: part, selectorLabels: { app: 'b' }, serviceAccountName: 'b', sshdImage: 'sshd', composerImage: 'img', hostKeysSecretName: 'keys' };
  const containers = (objects: Any[]) => Object.fromEntries(objects[0].spec.template.spec.containers.map((c: Any) => [c.name, c]));

  it('BastionDeployment with its defaults: one replica, the default counter name, upstream\'s pod (no pod securityContext, no /tmp volume)', () => {
    const objects = synth((c) => new BastionDeployment(c, 'd', base));
    expect(objects[0].spec.replicas).toBe(1);
    expect(containers(objects)['ssh-tracker'].args).toEqual(['ssh-tracker', '--metrics-addr', ':9090', '--ssh-tracker-metric-name', 'bastion_ssh_connections']);
    expect(objects[0].spec.template.spec.securityContext).toBeUndefined();
    expect(objects[0].spec.template.spec.volumes.map((v: Any) => v.name)).toEqual(['authorized-keys', 'host-keys']);
    expect(containers(objects)['ssh-tracker'].securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { add: ['NET_RAW', 'NET_ADMIN'], drop: ['ALL'] } });
  });

  it('BastionDeployment with replicas, metricName and hardened', () => {
    const objects = synth((c) => new BastionDeployment(c, 'd', { ...base, replicas: 3, metricName: 'ssh_total', hardened: true }));
    expect(objects[0].spec.replicas).toBe(3);
    expect(containers(objects)['ssh-tracker'].args.at(-1)).toBe('ssh_total');
    expect(containers(objects)['bastion-keys'].securityContext).toMatchObject({ readOnlyRootFilesystem: true, runAsNonRoot: true, runAsUser: 10001, allowPrivilegeEscalation: false });
    expect(containers(objects)['ssh-tracker'].securityContext).toMatchObject({ allowPrivilegeEscalation: true, capabilities: { add: ['NET_RAW', 'NET_ADMIN'], drop: ['ALL'] } });
  });

  it('BastionRbac defaults to reading Tenants; given rules replace them', () => {
    const def = synth((c) => new BastionRbac(c, 'r', { name: 'b', namespace: 'ns', labels: part }));
    expect(def[1].rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['get', 'list', 'watch'] }]);
    expect(synth((c) => new BastionRbac(c, 'r', { name: 'b', namespace: 'ns', labels: part, rules: [rule] }))[1].rules).toEqual([rule]);
  });

  it('BastionService: a LoadBalancer from 22 to sshd\'s 2222 on the given selector', () => {
    const [svc] = synth((c) => new BastionService(c, 's', { name: 'b', namespace: 'ns', labels: part, selectorLabels: { app: 'b' } }));
    expect(svc.spec).toEqual({ type: 'LoadBalancer', selector: { app: 'b' }, ports: [{ name: 'ssh', port: 22, targetPort: 2222, protocol: 'TCP' }] });
  });
});

describe('SharedClusterRoles', () => {
  it('five ClusterRoles; sandboxClusterRole renames the sandbox one, labels go on every role', () => {
    const names = (objects: Any[]) => objects.map((o) => o.metadata.name);
    expect(names(synth((c) => new SharedClusterRoles(c, 'r')))).toEqual(['crownlabs-manage-instances', 'crownlabs-view-templates', 'crownlabs-manage-templates', 'crownlabs-manage-tenants', 'crownlabs-sandbox']);
    const renamed = synth((c) => new SharedClusterRoles(c, 'r', { sandboxClusterRole: 'my-sandbox', labels: part }));
    expect(names(renamed).at(-1)).toBe('my-sandbox');
    for (const o of renamed) expect(o.metadata.labels).toEqual(part);
    expect(renamed[3].rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] }]);
  });
});
