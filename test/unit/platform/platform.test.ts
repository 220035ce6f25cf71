import { App } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { PlatformChart } from '../../../constructs/platform/platform-chart.ts';
import type { WebhookWiring } from '../../../constructs/platform/controller-shard.ts';
import { defaultConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { KIND_RESOURCES } from '../../../src/kube/resources.ts';
import { childKinds } from '../../../src/controller/child-kinds.ts';
import { representativeObjects } from '../../../src/compose/representative-lab.ts';
import { deriveControllerRbac, informerKinds } from '../../../src/platform/derive-rbac.ts';
import { platformInstallProps, renderPlatform } from '../../../src/platform/install.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const config = (o: Partial<ComposerConfig> = {}): ComposerConfig => ({ ...defaultConfig(), ...o });
const grants = (rules: Any[]) => {
  const m = new Map<string, Set<string>>();
  for (const r of rules) if (!r.resourceNames) for (const g of r.apiGroups) for (const res of r.resources) m.set(`${g}/${res}`, new Set([...(m.get(`${g}/${res}`) ?? []), ...r.verbs]));
  return m;
};
const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

describe('issue 8: the controller role is derived from what it renders and reads', () => {
  const rbac = deriveControllerRbac(config(), ['lease-a']);
  const g = grants(rbac.clusterRules);

  it('every informer the controller starts may list and watch its kind', () => {
    for (const { apiVersion, kind } of informerKinds()) {
      const verbs = g.get(`${groupOf(apiVersion)}/${KIND_RESOURCES[`${apiVersion}/${kind}`].plural}`);
      expect([...(verbs ?? [])], `${apiVersion} ${kind}`).toEqual(expect.arrayContaining(['list', 'watch']));
    }
  });

  it('every rendered kind may be created and patched (SSA), and deleted where the controller prunes it', () => {
    const children = new Set(childKinds().map((k) => `${k.apiVersion}/${k.kind}`));
    for (const o of representativeObjects(config()).objects) {
      const verbs = [...(g.get(`${groupOf(o.apiVersion)}/${KIND_RESOURCES[`${o.apiVersion}/${o.kind}`].plural}`) ?? [])];
      expect(verbs, o.kind).toEqual(expect.arrayContaining(['create', 'patch', ...(children.has(`${o.apiVersion}/${o.kind}`) ? ['delete'] : [])]));
    }
  });

  it('watched kinds the composition never applies are read-only (PersistentVolumes, Templates); Jobs are only read and created (snapshots); DataVolumes (made by CDI, never labelled by us) are not read', () => {
    expect([...g.get('batch/jobs')!]).toEqual(['get', 'list', 'watch', 'create']);
    expect(g.has('cdi.kubevirt.io/datavolumes')).toBe(false);
    expect([...g.get('/persistentvolumes')!]).toEqual(['list', 'watch']);
    // get: a snapshot's Template missing from the cache is looked up on the server before failing.
    expect([...g.get('crownlabs.polito.it/templates')!]).toEqual(['get', 'list', 'watch']);
  });

  it('parents: metadata patch, status patch, finalizers update; Events create; no wildcard, no escalate, no get on children', () => {
    expect([...g.get('crownlabs.polito.it/instancesnapshots')!]).toEqual(['list', 'watch']);
    expect([...g.get('crownlabs.polito.it/instancesnapshots/status')!]).toEqual(['patch']);
    for (const p of ['instances', 'tenants', 'workspaces']) {
      expect([...g.get(`crownlabs.polito.it/${p}/status`)!]).toEqual(['patch']);
      expect([...g.get(`crownlabs.polito.it/${p}/finalizers`)!]).toEqual(['update']);
      expect(g.get(`crownlabs.polito.it/${p}`)!.has('patch')).toBe(true);
    }
    expect([...g.get('/events')!]).toEqual(['create']);
    const flat = rbac.clusterRules.flatMap((r: Any) => [...r.verbs, ...r.resources, ...r.apiGroups]);
    expect(flat).not.toContain('*');
    expect(flat).not.toContain('escalate');
    expect(g.get('/secrets')!.has('get')).toBe(false);
  });

  it('binds the shared ClusterRoles by name only, and holds what the per-tenant ClusterRoles grant', () => {
    const bind = rbac.clusterRules.filter((r: Any) => r.verbs.includes('bind'));
    expect(bind.every((r: Any) => r.resourceNames?.length === 1 && r.verbs.length === 1)).toBe(true);
    // crownlabs-view-templates grants get/list/watch of Templates, which the controller holds: binding it needs no `bind`.
    expect(bind.map((r: Any) => r.resourceNames[0]).sort()).toEqual(['crownlabs-manage-instances', 'crownlabs-manage-templates', 'crownlabs-manage-tenants', 'crownlabs-sandbox']);
    expect([...g.get('crownlabs.polito.it/templates')!]).toEqual(expect.arrayContaining(['get', 'list', 'watch']));
    expect([...g.get('crownlabs.polito.it/tenants')!].sort()).toEqual(['get', 'list', 'patch', 'update', 'watch']);
  });

  it('holds no write of Endpoints, EndpointSlices or DaemonSets, in either auth mode (nothing it renders or grants needs one)', () => {
    for (const authMode of ['shared', 'per-instance'] as const) {
      const held = grants(deriveControllerRbac(config({ authMode }), ['lease-a']).clusterRules);
      for (const key of ['/endpoints', 'discovery.k8s.io/endpointslices', 'apps/daemonsets']) {
        expect([...(held.get(key) ?? [])].filter((v) => !['get', 'list', 'watch'].includes(v)), `${authMode} ${key}`).toEqual([]);
      }
    }
  });

  it('ConfigMaps (the per-instance oauth2-proxy configuration) are watched and pruned in either auth mode, written in per-instance mode only', () => {
    expect(g.get('/configmaps')).toEqual(new Set(['list', 'watch', 'delete']));
    expect(grants(deriveControllerRbac(config({ authMode: 'per-instance' }), ['l']).clusterRules).get('/configmaps')).toEqual(new Set(['list', 'watch', 'create', 'patch', 'delete']));
  });

  it('Pods are listed (the IP behind a headless Service) only by the install of the level that renders headless Services', () => {
    expect(g.get('/pods')?.has('list') ?? false).toBe(false);
    expect(grants(deriveControllerRbac(config({ apiLevel: 'e62be9e' }), ['l']).clusterRules).get('/pods')?.has('list')).toBe(true);
  });

  it('the Lease: create, and get/update of the shards\' Leases by name', () => {
    expect(rbac.leaseRules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'update'], resourceNames: ['lease-a'] },
    ]);
  });
});

describe('issue 8: the rendered install', () => {
  const objects = renderPlatform(config({ platformShards: ['prod', 'exam'], platformServiceMonitor: true, platformImageListRegistryUrl: 'http://registry:5000' })) as Any[];
  const of = (kind: string) => objects.filter((o) => o.kind === kind);

  it('one controller Deployment per shard, each with its target label, whitelist, Lease and leader election', () => {
    const ctl = of('Deployment').filter((d) => d.metadata.name.startsWith('crownlabs-controller-'));
    expect(ctl.map((d) => d.metadata.name)).toEqual(['crownlabs-controller-prod', 'crownlabs-controller-exam']);
    const args = ctl[1].spec.template.spec.containers[0].args;
    expect(args).toEqual(expect.arrayContaining(['controller', '--enable-leader-election']));
    expect(args[args.indexOf('--target-label') + 1]).toBe('crownlabs.polito.it/operator-selector=exam');
    expect(args[args.indexOf('--namespace-whitelist') + 1]).toBe('crownlabs.polito.it/operator-selector=exam');
    expect(args[args.indexOf('--leader-election-id') + 1]).toBe('crownlabs-composer-exam');
    // Two glibc malloc arenas (bench/RESULTS.md: −9 MB of a burst's peak RSS).
    for (const d of ctl) expect(d.spec.template.spec.containers[0].env).toContainEqual({ name: 'MALLOC_ARENA_MAX', value: '2' });
    const role = of('Role').find((r) => r.metadata.name === 'crownlabs-controller-leader-election');
    expect(role.rules[1].resourceNames).toEqual(['crownlabs-composer-prod', 'crownlabs-composer-exam']);
    expect(of('PodDisruptionBudget').map((p) => p.metadata.name)).toEqual(['crownlabs-controller-prod', 'crownlabs-controller-exam', 'ssh-bastion']);
  });

  it('CrownLabs CRDs only, namespace, ConfigMap without secrets, ServiceMonitor when enabled', () => {
    expect(of('CustomResourceDefinition').map((c) => c.metadata.name).every((n: string) => n.endsWith('.crownlabs.polito.it'))).toBe(true);
    expect(of('CustomResourceDefinition')).toHaveLength(6);
    const cm = of('ConfigMap')[0].data['config.yaml'];
    expect(cm).toContain('targetLabel: crownlabs.polito.it/operator-selector=production');
    expect(cm).not.toMatch(/keycloakPassword|oidcClientSecret|platform/);
    expect(of('ServiceMonitor')[0].apiVersion).toBe('monitoring.coreos.com/v1');
    expect(renderPlatform(config()).some((o) => o.kind === 'ServiceMonitor')).toBe(false);
    expect(renderPlatform(config({ platformInstallCrds: false })).some((o) => o.kind === 'CustomResourceDefinition')).toBe(false);
  });

  it('/metrics of every controller is HTTPS behind authentication: the flag, the review RBAC, a metrics-reader role, and the ServiceMonitor scraping it with a token', () => {
    const ctl = of('Deployment').filter((d) => d.metadata.name.startsWith('crownlabs-controller-'));
    for (const d of ctl) expect(d.spec.template.spec.containers[0].args).toContain('--metrics-secure');
    const controllerRole = of('ClusterRole').find((r) => r.metadata.name === 'crownlabs-controller');
    const g = grants(controllerRole.rules);
    expect([...g.get('authentication.k8s.io/tokenreviews')!]).toEqual(['create']);
    expect([...g.get('authorization.k8s.io/subjectaccessreviews')!]).toEqual(['create']);
    expect(of('ClusterRole').find((r) => r.metadata.name === 'crownlabs-controller-metrics-reader').rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    const services = of('Service').filter((s) => s.metadata.name.startsWith('crownlabs-controller-'));
    for (const svc of services) expect(svc.spec.ports.find((p: Any) => p.port === 8080).name).toBe('https-metrics');
    const [endpoint] = of('ServiceMonitor')[0].spec.endpoints;
    expect(endpoint).toMatchObject({ port: 'https-metrics', scheme: 'https', bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' });
  });

  it('the bastion namespace carries allow-instance-access: tenant NetworkPolicies admit it to the VMs (§5.4 row 7)', () => {
    const bastionNs = of('Namespace').find((n) => n.metadata.name === 'crownlabs-bastion');
    expect(bastionNs.metadata.labels['crownlabs.polito.it/allow-instance-access']).toBe('true');
  });

  it("the Instance policies (frozen Template spec; names, owner, Template) exempt the controllers' ServiceAccount, one of each for every shard", () => {
    const policies = of('ValidatingAdmissionPolicy').filter((p) => p.metadata.name.startsWith('crownlabs-instance-'));
    expect(policies.map((p) => p.metadata.name)).toEqual(['crownlabs-instance-frozen-template', 'crownlabs-instance-admission']);
    for (const policy of policies) expect(policy.spec.matchConditions[0].expression).toBe('!(request.userInfo.username in ["system:serviceaccount:crownlabs-composer:crownlabs-controller"])');
    const sa = of('ServiceAccount').find((a) => a.metadata.name === 'crownlabs-controller');
    expect(sa.metadata.namespace).toBe('crownlabs-composer');
    expect(of('Deployment').filter((d) => d.metadata.name.startsWith('crownlabs-controller-')).map((d) => d.spec.template.spec.serviceAccountName)).toEqual(['crownlabs-controller', 'crownlabs-controller']);
    expect(of('ValidatingAdmissionPolicyBinding').filter((b) => b.spec.policyName.startsWith('crownlabs-instance-')).map((b) => [b.spec.policyName, b.spec.validationActions])).toEqual(policies.map((p) => [p.metadata.name, ['Deny']]));
  });

  it('only the controller and Argo CD may write our managed-by label and parent annotation outside tenant and workspace namespaces (one policy for every shard)', () => {
    const policies = of('ValidatingAdmissionPolicy').filter((p) => p.metadata.name === 'crownlabs-composer-labels');
    expect(policies).toHaveLength(1);
    const [policy] = policies;
    expect(policy.spec.matchConditions[0].expression).toBe(
      '!(request.userInfo.username in ["system:serviceaccount:crownlabs-composer:crownlabs-controller", "system:serviceaccount:argocd:argocd-application-controller"])',
    );
    const rules = policy.spec.matchConstraints.resourceRules as { apiGroups: string[]; resources: string[]; scope: string }[];
    const core = rules.find((r) => r.apiGroups[0] === '')!;
    expect(core.resources).toEqual(expect.arrayContaining(['secrets', 'services', 'persistentvolumeclaims', 'configmaps']));
    expect(rules.flatMap((r) => r.resources)).toEqual(expect.arrayContaining(['deployments', 'ingresses', 'virtualmachines', 'rolebindings']));
    expect(rules.flatMap((r) => r.resources)).not.toContain('clusterroles');
    expect(rules.every((r) => r.scope === 'Namespaced')).toBe(true);
    const [binding] = of('ValidatingAdmissionPolicyBinding').filter((b) => b.spec.policyName === 'crownlabs-composer-labels');
    expect(binding.spec.matchResources.namespaceSelector).toEqual({
      matchExpressions: [
        { key: 'crownlabs.polito.it/type', operator: 'NotIn', values: ['tenant', 'workspace'] },
        { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['mydrive-pvcs'] },
      ],
    });
  });

  it('every container: read-only root, no privilege escalation, all capabilities dropped; only the tracker adds NET_RAW/NET_ADMIN', () => {
    for (const d of of('Deployment')) {
      const pod = d.spec.template.spec;
      for (const c of pod.containers) {
        const sc = c.securityContext;
        expect(sc.capabilities.drop, `${d.metadata.name}/${c.name}`).toEqual(['ALL']);
        if (c.name === 'ssh-tracker') expect(sc.capabilities.add).toEqual(['NET_RAW', 'NET_ADMIN']);
        else expect(sc.capabilities.add, c.name).toBeUndefined();
        if (c.name === 'sshd') continue; // upstream's image, run as its own user
        expect(sc.readOnlyRootFilesystem, c.name).toBe(true);
        expect(pod.securityContext?.runAsNonRoot || sc.runAsNonRoot, c.name).toBe(true);
        if (c.name !== 'ssh-tracker') expect(sc.allowPrivilegeEscalation, c.name).toBe(false);
      }
    }
  });

  it('the image-list updater gets its flags and a role limited to its ImageList', () => {
    const d = of('Deployment').find((x) => x.metadata.name === 'crownlabs-imagelist-updater');
    expect(d.spec.template.spec.containers[0].args).toEqual(['imagelist', '--advertised-registry-name', 'registry.internal.crownlabs.polito.it', '--image-list-name', 'crownlabs-virtual-machine-images', '--registry-url', 'http://registry:5000', '--update-interval', '60']);
    const role = of('ClusterRole').find((r) => r.metadata.name === 'crownlabs-imagelist-updater');
    expect(role.rules).toEqual([
      { apiGroups: ['crownlabs.polito.it'], resources: ['imagelists'], verbs: ['create'] },
      { apiGroups: ['crownlabs.polito.it'], resources: ['imagelists'], verbs: ['patch'], resourceNames: ['crownlabs-virtual-machine-images'] },
    ]);
    expect(of('ClusterRole').find((r) => r.metadata.name === 'ssh-bastion').rules).toEqual([{ apiGroups: ['crownlabs.polito.it'], resources: ['tenants'], verbs: ['list', 'watch'] }]);
  });

  it('the webhook hook is called once per shard with its Service and the configured certificate path', () => {
    const calls: WebhookWiring[] = [];
    const props = { ...platformInstallProps(config({ platformShards: ['a', 'b'], platformWebhookCertificate: 'crownlabs-composer/webhooks' })), webhooks: (_s: unknown, _id: string, p: WebhookWiring) => void calls.push(p) };
    new PlatformChart(new App(), 'p', { install: props }).toJson();
    expect(calls).toEqual([
      { service: { namespace: 'crownlabs-composer', name: 'crownlabs-controller-a', port: 443 }, namespaceLabel: { key: 'crownlabs.polito.it/operator-selector', value: 'a' }, certManagerCertificate: 'crownlabs-composer/webhooks', namePrefix: 'crownlabs-controller-a-' },
      { service: { namespace: 'crownlabs-composer', name: 'crownlabs-controller-b', port: 443 }, namespaceLabel: { key: 'crownlabs.polito.it/operator-selector', value: 'b' }, certManagerCertificate: 'crownlabs-composer/webhooks', namePrefix: 'crownlabs-controller-b-' },
    ]);
  });

  it('renders the Tenant webhook configurations of each shard, pointed at its Service, with the serving certificate mounted', () => {
    const objects = new PlatformChart(new App(), 'p', { install: platformInstallProps(config({ platformShards: ['a'], platformWebhookCertificate: 'crownlabs-composer/webhooks' })) }).toJson();
    const hooks = objects.filter((o) => /WebhookConfiguration$/.test(o.kind));
    expect(hooks.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual([
      'MutatingWebhookConfiguration/crownlabs-controller-a-tenant-webhook',
      'ValidatingWebhookConfiguration/crownlabs-controller-a-tenant-webhook',
    ]);
    for (const h of hooks) expect(h.webhooks[0].clientConfig.service).toMatchObject({ namespace: 'crownlabs-composer', name: 'crownlabs-controller-a', port: 443 });
    const pod = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'crownlabs-controller-a').spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'webhook-certs', secret: { secretName: 'crownlabs-controller-webhook-tls' } });
    const args: string[] = pod.containers[0].args;
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'webhook-certs', mountPath: args[args.indexOf('--webhook-cert-dir') + 1], readOnly: true });
  });

  it('at e62be9e each shard also registers the Instance quota webhook for its own namespaces, and may keep the quota ledger in the install namespace', () => {
    const objects = renderPlatform(config({ apiLevel: 'e62be9e', platformShards: ['a'], platformWebhookCertificate: 'crownlabs-composer/webhooks' })) as Any[];
    const hook = objects.find((o) => o.kind === 'ValidatingWebhookConfiguration' && o.metadata.name === 'crownlabs-controller-a-instance-webhook');
    expect(hook.metadata.annotations).toEqual({ 'cert-manager.io/inject-ca-from': 'crownlabs-composer/webhooks' });
    expect(hook.webhooks).toEqual([
      {
        name: 'validate.instance.crownlabs.polito.it',
        clientConfig: { service: { namespace: 'crownlabs-composer', name: 'crownlabs-controller-a', path: '/validator-v1alpha2-instance', port: 443 } },
        failurePolicy: 'Fail',
        sideEffects: 'NoneOnDryRun',
        timeoutSeconds: 30,
        admissionReviewVersions: ['v1'],
        namespaceSelector: { matchLabels: { 'crownlabs.polito.it/operator-selector': 'a' } },
        rules: [{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['instances'], scope: 'Namespaced' }],
      },
    ]);
    const role = objects.find((o) => o.kind === 'Role' && o.metadata.namespace === 'crownlabs-composer');
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'create', 'update'] });
    // At 2e8aeb9 neither exists.
    const older = renderPlatform(config({ platformShards: ['a'], platformWebhookCertificate: 'crownlabs-composer/webhooks' })) as Any[];
    expect(older.filter((o) => o.metadata.name.endsWith('instance-webhook'))).toEqual([]);
    expect(older.find((o) => o.kind === 'Role' && o.metadata.namespace === 'crownlabs-composer').rules.map((r: Any) => r.resources).flat()).not.toContain('configmaps');
  });

  it('without a certificate path no webhook is registered and the controllers serve none (failurePolicy Fail would block every Tenant write)', () => {
    const objects = renderPlatform(config({ platformShards: ['a'] }));
    expect(objects.filter((o: Any) => /WebhookConfiguration$/.test(o.kind))).toEqual([]);
    const args: string[] = (objects as Any[]).find((o) => o.kind === 'Deployment' && o.metadata.name === 'crownlabs-controller-a').spec.template.spec.containers[0].args;
    expect(args.join(' ')).toContain('--webhook-port 0');
  });

  it('instance automation of platformInstanceAutomation is enabled on every controller and its declared access granted', () => {
    const cfg = config({ platformShards: ['a', 'b'], platformInstanceAutomation: ['expiration', 'submission'] });
    const deployments = renderPlatform(cfg).filter((o: Any) => o.kind === 'Deployment' && o.metadata.name.startsWith('crownlabs-controller-'));
    expect(deployments).toHaveLength(2);
    for (const d of deployments as Any[]) expect(d.spec.template.spec.containers[0].args).toEqual(expect.arrayContaining(['--enable-instance-expiration', '--enable-instance-submission']));
    const granted = grants(deriveControllerRbac(cfg, ['l']).clusterRules);
    expect([...granted.get('crownlabs.polito.it/instances')!]).toEqual(expect.arrayContaining(['delete', 'patch']));
    // Without expiration nothing deletes Instances.
    expect(grants(deriveControllerRbac(config(), ['l']).clusterRules).get('crownlabs.polito.it/instances')!.has('delete')).toBe(false);
  });

  it('inactivity gets its Prometheus, our tracker\'s availability query and, with a mail Secret, the crownmail mounts and notifications', () => {
    const controller = (over: Parameters<typeof config>[0]) =>
      (renderPlatform(config({ platformShards: ['a'], ...over })) as Any[]).find((o) => o.kind === 'Deployment' && o.metadata.name === 'crownlabs-controller-a').spec.template.spec;
    const pod = controller({ platformInstanceAutomation: ['inactive-termination'], platformPrometheusUrl: 'http://prom.monitoring:9090', platformMailSecret: 'crownmail-configs', platformMailTemplates: 'crownmail-templates' });
    const args: string[] = pod.containers[0].args;
    const after = (flag: string) => args[args.indexOf(flag) + 1];
    expect(args).toContain('--enable-instance-inactive-termination');
    expect(after('--monitoring-prometheus-url')).toBe('http://prom.monitoring:9090');
    expect(after('--monitoring-bastion-ssh-availability')).toBe('count(up{container="ssh-tracker"})');
    expect(args).toContain('--enable-inactivity-notifications');
    expect(after('--mail-config-dir')).toBe('/etc/crownmail/configs');
    expect(after('--mail-template-dir')).toBe('/etc/crownmail/templates');
    expect(pod.volumes).toEqual(expect.arrayContaining([{ name: 'crownmail-configs', secret: { secretName: 'crownmail-configs' } }, { name: 'crownmail-templates', configMap: { name: 'crownmail-templates' } }]));
    expect(pod.containers[0].volumeMounts).toEqual(expect.arrayContaining([{ name: 'crownmail-configs', mountPath: '/etc/crownmail/configs', readOnly: true }]));
    const granted = grants(deriveControllerRbac(config({ platformInstanceAutomation: ['inactive-termination'] }), ['l']).clusterRules);
    expect([...granted.get('crownlabs.polito.it/instances')!]).toEqual(expect.arrayContaining(['delete', 'patch']));
    // A mail Secret without the automation mounts nothing; the automation without one sends no mail.
    expect(controller({ platformMailSecret: 'crownmail-configs' }).volumes.map((v: Any) => v.name)).not.toContain('crownmail-configs');
    expect(controller({ platformInstanceAutomation: ['inactive-termination'] }).containers[0].args).not.toContain('--enable-inactivity-notifications');
  });
});

