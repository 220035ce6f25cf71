import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ApiObject, Include } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { BASTION, BastionDeployment } from '../bastion/bastion-deployment.ts';
import { BastionRbac } from '../bastion/bastion-rbac.ts';
import { BastionService } from '../bastion/bastion-service.ts';
import { containerSecurity, POD_SECURITY, TMP_MOUNT, TMP_VOLUME } from './restricted-pod-security.ts';

/** Where TenantWebhooks (constructs/platform/tenant-webhooks.ts) is told to send admission reviews. */
export interface WebhookWiring {
  targetLabel: { key: string; value: string };
  service?: { namespace: string; name: string; port?: number };
  url?: string;
  caBundle?: string;
  /** cert-manager Certificate `namespace/name` (cainjector annotation). */
  certManagerCertificate?: string;
  namePrefix?: string;
}

export interface PlatformInstallProps {
  readonly namespace: string;
  readonly image: string;
  /** Folder of the vendored CRDs; only the CrownLabs ones are rendered. Undefined: no CRDs. */
  readonly crdsDir?: string;
  /** One controller per value of `targetLabelKey`. */
  readonly targetLabelKey: string;
  readonly shards: readonly string[];
  /** Per shard: extra controller flags (e.g. its namespace whitelist). */
  readonly shardArgs?: (shard: string) => string[];
  readonly controllerReplicas: number;
  readonly controllerResources: { cpu: string; memory: string };
  /** The configuration file of every component (ConfigMap `<namespace>/crownlabs-composer-config`). */
  readonly configYaml: string;
  /** Secret holding `keycloakPassword` / `oidcClientSecret` / `cookieSecretSeed` (optional keys). */
  readonly secretName: string;
  readonly controllerRules: k8s.PolicyRule[];
  readonly leaseRules: k8s.PolicyRule[];
  readonly leaseName: (shard: string) => string;
  readonly serviceMonitor: boolean;
  readonly webhookCaBundle?: string;
  readonly webhookCertificate?: string;
  /** Instantiates the webhook configurations of a shard (TenantWebhooks); undefined: none rendered. */
  readonly webhooks?: (scope: Construct, id: string, props: WebhookWiring) => void;
  readonly bastion?: { sshdImage: string; rules: k8s.PolicyRule[] };
  readonly imageList?: { registryUrl: string; name: string; advertisedRegistryName: string; updateIntervalSeconds: number; rules: k8s.PolicyRule[] };
}

const PORTS = { metrics: 8080, health: 8081, webhook: 9443 } as const;
/** The serving certificate of the webhooks (tls.crt, tls.key): a cert-manager Certificate's secretName, or one you create. */
export const WEBHOOK_TLS_SECRET = 'crownlabs-controller-webhook-tls';
const WEBHOOK_CERT_DIR = '/etc/crownlabs/webhook-certs';
const CONFIG_MOUNT = '/etc/crownlabs';
const int = (n: number | string) => (typeof n === 'number' ? k8s.IntOrString.fromNumber(n) : k8s.IntOrString.fromString(n));

/**
 * The whole install of crownlabs-composer (issue 8): CRDs, namespace, ConfigMap, and per component
 * its ServiceAccount, derived RBAC, locked-down Deployment, Services and PodDisruptionBudget, plus
 * an optional ServiceMonitor. Rules come in as props: src/platform/derive-rbac.ts computes them.
 */
export class PlatformInstall extends Construct {
  constructor(scope: Construct, id: string, props: PlatformInstallProps) {
    super(scope, id);
    const ns = props.namespace;
    const part = { 'app.kubernetes.io/part-of': 'crownlabs' };
    if (props.crdsDir) {
      for (const f of readdirSync(props.crdsDir).filter((n) => n.startsWith('crownlabs.polito.it_')).sort()) {
        const crds = new Include(this, `crd-${f}`, { url: join(props.crdsDir, f) });
        // Deleting the install (or its Argo CD Application) must never delete every CrownLabs resource.
        for (const o of crds.apiObjects) o.metadata.addAnnotation('argocd.argoproj.io/sync-options', 'Delete=false,Prune=false');
      }
    }
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: ns, labels: { ...part, 'pod-security.kubernetes.io/enforce': 'restricted' } } });
    new k8s.KubeConfigMap(this, 'config', { metadata: { name: 'crownlabs-composer-config', namespace: ns, labels: part }, data: { 'config.yaml': props.configYaml } });

    // --- the controller: one ServiceAccount and ClusterRole, one Deployment per shard ---
    const ctl = 'crownlabs-controller';
    const ctlLabels = { ...part, 'app.kubernetes.io/name': ctl };
    new k8s.KubeServiceAccount(this, 'controller-sa', { metadata: { name: ctl, namespace: ns, labels: ctlLabels } });
    new k8s.KubeClusterRole(this, 'controller-role', { metadata: { name: ctl, labels: ctlLabels }, rules: props.controllerRules });
    new k8s.KubeClusterRoleBinding(this, 'controller-binding', {
      metadata: { name: ctl, labels: ctlLabels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ctl },
      subjects: [{ kind: 'ServiceAccount', name: ctl, namespace: ns }],
    });
    new k8s.KubeRole(this, 'controller-lease-role', { metadata: { name: `${ctl}-leader-election`, namespace: ns, labels: ctlLabels }, rules: props.leaseRules });
    new k8s.KubeRoleBinding(this, 'controller-lease-binding', {
      metadata: { name: `${ctl}-leader-election`, namespace: ns, labels: ctlLabels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${ctl}-leader-election` },
      subjects: [{ kind: 'ServiceAccount', name: ctl, namespace: ns }],
    });
    // Webhooks only with a way for the API server to trust their certificate: with failurePolicy
    // Fail, an untrusted endpoint would refuse every Tenant write.
    const webhooksOn = Boolean(props.webhooks && (props.webhookCaBundle || props.webhookCertificate));
    const webhookVolume = { name: 'webhook-certs', secret: { secretName: WEBHOOK_TLS_SECRET } };
    const webhookArgs = webhooksOn ? ['--webhook-cert-dir', WEBHOOK_CERT_DIR] : ['--webhook-port', '0'];
    const secretEnv = (name: string, key: string): k8s.EnvVar => ({ name, valueFrom: { secretKeyRef: { name: props.secretName, key, optional: true } } });
    for (const shard of props.shards) {
      const name = `${ctl}-${shard}`;
      const selector = { 'app.kubernetes.io/name': ctl, 'app.kubernetes.io/instance': shard };
      const labels = { ...ctlLabels, ...selector, 'app.kubernetes.io/component': 'controller' };
      new k8s.KubeDeployment(this, `controller-${shard}`, {
        metadata: { name, namespace: ns, labels },
        spec: {
          replicas: props.controllerReplicas,
          selector: { matchLabels: selector },
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: ctl,
              securityContext: POD_SECURITY,
              volumes: [{ name: 'config', configMap: { name: 'crownlabs-composer-config' } }, TMP_VOLUME, ...(webhooksOn ? [webhookVolume] : [])],
              containers: [
                {
                  name: 'controller',
                  image: props.image,
                  args: [
                    'controller',
                    '--config',
                    `${CONFIG_MOUNT}/config.yaml`,
                    '--target-label',
                    `${props.targetLabelKey}=${shard}`,
                    ...(props.shardArgs?.(shard) ?? []),
                    ...webhookArgs,
                    '--enable-leader-election',
                    '--leader-election-id',
                    props.leaseName(shard),
                    '--leader-election-namespace',
                    ns,
                    '--metrics-addr',
                    `:${PORTS.metrics}`,
                    '--health-probe-addr',
                    `:${PORTS.health}`,
                  ],
                  env: [
                    secretEnv('CROWNLABS_KEYCLOAK_PASSWORD', 'keycloakPassword'),
                    secretEnv('CROWNLABS_OIDC_CLIENT_SECRET', 'oidcClientSecret'),
                    secretEnv('CROWNLABS_COOKIE_SECRET_SEED', 'cookieSecretSeed'),
                  ],
                  ports: [
                    { name: 'metrics', containerPort: PORTS.metrics, protocol: 'TCP' },
                    { name: 'health', containerPort: PORTS.health, protocol: 'TCP' },
                    { name: 'webhook', containerPort: PORTS.webhook, protocol: 'TCP' },
                  ],
                  // /healthz, not /readyz: a standby replica waits for the Lease before syncing
                  // caches; were it unready, rolling updates would wait for it forever.
                  livenessProbe: { httpGet: { path: '/healthz', port: int('health') }, periodSeconds: 20 },
                  readinessProbe: { httpGet: { path: '/healthz', port: int('health') }, periodSeconds: 10 },
                  resources: {
                    requests: { cpu: k8s.Quantity.fromString(props.controllerResources.cpu), memory: k8s.Quantity.fromString(props.controllerResources.memory) },
                    limits: { memory: k8s.Quantity.fromString(props.controllerResources.memory) },
                  },
                  volumeMounts: [
                    { name: 'config', mountPath: CONFIG_MOUNT, readOnly: true },
                    TMP_MOUNT,
                    ...(webhooksOn ? [{ name: webhookVolume.name, mountPath: WEBHOOK_CERT_DIR, readOnly: true }] : []),
                  ],
                  securityContext: containerSecurity(),
                },
              ],
            },
          },
        },
      });
      new k8s.KubeService(this, `controller-${shard}-service`, {
        metadata: { name, namespace: ns, labels },
        spec: {
          selector,
          ports: [
            { name: 'metrics', port: PORTS.metrics, targetPort: int('metrics'), protocol: 'TCP' },
            { name: 'webhook', port: 443, targetPort: int('webhook'), protocol: 'TCP' },
          ],
        },
      });
      new k8s.KubePodDisruptionBudget(this, `controller-${shard}-pdb`, {
        metadata: { name, namespace: ns, labels },
        spec: { minAvailable: int(1), selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
      });
      // ─── WEBHOOK CONFIGURATIONS: the one place TenantWebhooks is instantiated (see docs/deploy.md, "Webhooks") ───
      // The certificate comes from cert-manager (`platformWebhookCertificate`, cainjector) or from
      // a given CA bundle (`platformWebhookCaBundle`); the Service above routes 443 to the pod's 9443.
      if (webhooksOn) props.webhooks!(this, `webhooks-${shard}`, {
        targetLabel: { key: props.targetLabelKey, value: shard },
        service: { namespace: ns, name, port: 443 },
        ...(props.webhookCaBundle ? { caBundle: props.webhookCaBundle } : {}),
        ...(props.webhookCertificate ? { certManagerCertificate: props.webhookCertificate } : {}),
        namePrefix: `${name}-`,
      });
    }

    // --- the image-list updater ---
    if (props.imageList) {
      const il = props.imageList;
      const name = 'crownlabs-imagelist-updater';
      const selector = { 'app.kubernetes.io/name': name };
      const labels = { ...part, ...selector, 'app.kubernetes.io/component': 'imagelist-updater' };
      new k8s.KubeServiceAccount(this, 'imagelist-sa', { metadata: { name, namespace: ns, labels } });
      new k8s.KubeClusterRole(this, 'imagelist-role', { metadata: { name, labels }, rules: il.rules });
      new k8s.KubeClusterRoleBinding(this, 'imagelist-binding', {
        metadata: { name, labels },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
      });
      new k8s.KubeDeployment(this, 'imagelist', {
        metadata: { name, namespace: ns, labels },
        spec: {
          replicas: 1,
          selector: { matchLabels: selector },
          template: {
            metadata: { labels },
            spec: {
              serviceAccountName: name,
              securityContext: POD_SECURITY,
              volumes: [TMP_VOLUME],
              containers: [
                {
                  name: 'imagelist',
                  image: props.image,
                  args: ['imagelist', '--advertised-registry-name', il.advertisedRegistryName, '--image-list-name', il.name, '--registry-url', il.registryUrl, '--update-interval', String(il.updateIntervalSeconds)],
                  env: [
                    { name: 'CROWNLABS_REGISTRY_USERNAME', valueFrom: { secretKeyRef: { name: props.secretName, key: 'registryUsername', optional: true } } },
                    { name: 'CROWNLABS_REGISTRY_PASSWORD', valueFrom: { secretKeyRef: { name: props.secretName, key: 'registryPassword', optional: true } } },
                  ],
                  resources: { requests: { cpu: k8s.Quantity.fromString('20m'), memory: k8s.Quantity.fromString('128Mi') }, limits: { memory: k8s.Quantity.fromString('256Mi') } },
                  volumeMounts: [TMP_MOUNT],
                  securityContext: containerSecurity(),
                },
              ],
            },
          },
        },
      });
    }

    // --- the SSH bastion (its own namespace, as upstream) ---
    if (props.bastion) {
      const bns = 'crownlabs-bastion';
      const name = 'ssh-bastion';
      const selectorLabels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'bastion' };
      const labels = { ...selectorLabels, ...part };
      new k8s.KubeNamespace(this, 'bastion-namespace', { metadata: { name: bns, labels: part } });
      const rbac = new BastionRbac(this, 'bastion-rbac', { name, namespace: bns, labels, rules: props.bastion.rules });
      new BastionDeployment(this, 'bastion', {
        name,
        namespace: bns,
        labels,
        selectorLabels,
        serviceAccountName: rbac.serviceAccountName,
        sshdImage: props.bastion.sshdImage,
        composerImage: props.image,
        hostKeysSecretName: `${name}-host-keys`,
        hardened: true,
      });
      new BastionService(this, 'bastion-service', { name, namespace: bns, labels, selectorLabels });
      new k8s.KubeService(this, 'bastion-metrics', {
        metadata: { name: `${name}-metrics`, namespace: bns, labels },
        spec: { selector: selectorLabels, ports: [{ name: 'metrics', port: BASTION.metricsPort, targetPort: int('metrics'), protocol: 'TCP' }] },
      });
      new k8s.KubePodDisruptionBudget(this, 'bastion-pdb', {
        metadata: { name, namespace: bns, labels },
        spec: { maxUnavailable: int(1), selector: { matchLabels: selectorLabels } },
      });
    }

    if (props.serviceMonitor) {
      // Every Service of the install with a `metrics` port (controllers, bastion tracker).
      new ApiObject(this, 'service-monitor', {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: 'crownlabs-composer', namespace: ns, labels: part },
        spec: {
          selector: { matchLabels: part },
          namespaceSelector: { matchNames: [ns, ...(props.bastion ? ['crownlabs-bastion'] : [])] },
          endpoints: [{ port: 'metrics', interval: '30s' }],
        },
      });
    }
  }
}
