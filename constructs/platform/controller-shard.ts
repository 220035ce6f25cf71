import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { containerSecurity, POD_SECURITY, TMP_MOUNT, TMP_VOLUME } from './restricted-pod-security.ts';

/** Where the webhook configurations (TenantWebhooks, InstanceQuotaWebhook) are told to send admission reviews. */
export interface WebhookWiring {
  service?: { namespace: string; name: string; port?: number };
  /** The shard's target label, which its namespaces carry. */
  namespaceLabel: { key: string; value: string };
  url?: string;
  caBundle?: string;
  /** cert-manager Certificate `namespace/name` (cainjector annotation). */
  certManagerCertificate?: string;
  namePrefix?: string;
}

/** The serving certificate of the webhooks (tls.crt, tls.key): a cert-manager Certificate's secretName, or one you create. */
export const WEBHOOK_TLS_SECRET = 'crownlabs-controller-webhook-tls';
const PORTS = { metrics: 8080, health: 8081, webhook: 9443 } as const;
/** The Service port of the controllers' HTTPS /metrics (MetricsServiceMonitor scrapes it with a bearer token). */
export const METRICS_PORT_NAME = 'https-metrics';
/**
 * glibc's malloc arenas for the controller process: by default up to 8 per core, one per thread
 * that allocates (libuv's pool, V8's GC helpers), each keeping freed memory of its own. Two measured
 * −9 MB of the 1,000-Instance burst's peak RSS (180–181 against 189–190 MB, bench/RESULTS.md) at
 * no CPU cost; musl-based images ignore it.
 */
export const CONTROLLER_MALLOC_ARENA_MAX = '2';
const WEBHOOK_CERT_DIR = '/etc/crownlabs/webhook-certs';
const CONFIG_MOUNT = '/etc/crownlabs';
// Where upstream's chart mounts the crownmail Secret and ConfigMap.
const MAIL_CONFIG_DIR = '/etc/crownmail/configs';
const MAIL_TEMPLATE_DIR = '/etc/crownmail/templates';

export interface ControllerShardProps {
  /** Namespace of the install. */
  readonly namespace: string;
  /** Prefix of the shard's objects (`<name>-<shard>`) and its `app.kubernetes.io/name`. */
  readonly name: string;
  /** Value of the target label this shard reconciles (`--target-label <targetLabelKey>=<shard>`). */
  readonly shard: string;
  readonly targetLabelKey: string;
  readonly image: string;
  /** ServiceAccount the pods run as (ControllerRbac's). */
  readonly serviceAccountName: string;
  /** Labels of every controller object; the shard adds its selector and `app.kubernetes.io/component`. */
  readonly labels: Record<string, string>;
  readonly replicas: number;
  /** CPU request; memory request and limit. */
  readonly resources: { cpu: string; memory: string };
  /** ConfigMap holding `config.yaml`, mounted at /etc/crownlabs. */
  readonly configMapName: string;
  /** Secret holding `keycloakPassword` / `oidcClientSecret` / `cookieSecretSeed` (each optional). */
  readonly secretName: string;
  /** Name of the shard's leader-election Lease (in `namespace`). */
  readonly leaseName: string;
  /**
   * Flags after `--target-label` (e.g. the shard's namespace whitelist, instance automation).
   * @default none
   */
  readonly extraArgs?: readonly string[];
  /**
   * Tenant mail (docs/behaviour.md §8.5): the Secret of `smtp-config.yaml`, and the ConfigMap of
   * templates, mounted where the controller's flags default to; notifications on.
   * @default no mail
   */
  readonly mail?: { readonly configSecret: string; readonly templatesConfigMap?: string };
  /**
   * Serve the Tenant webhooks: mounts WEBHOOK_TLS_SECRET and calls `render` once for the shard's
   * webhook configurations, trusting `caBundle` or cert-manager's `certificate`.
   * @default no webhooks: the server is off (`--webhook-port 0`) and no configuration is rendered
   */
  readonly webhooks?: { readonly caBundle?: string; readonly certificate?: string; readonly render: (scope: Construct, id: string, props: WebhookWiring) => void };
}

/** One controller shard: its Deployment (locked down, leader-elected), Service, PodDisruptionBudget and, optionally, webhook configurations. */
export class ControllerShard extends Construct {
  constructor(scope: Construct, id: string, props: ControllerShardProps) {
    super(scope, id);
    const { namespace: ns, shard } = props;
    const name = `${props.name}-${shard}`;
    const selector = { 'app.kubernetes.io/name': props.name, 'app.kubernetes.io/instance': shard };
    const labels = { ...props.labels, ...selector, 'app.kubernetes.io/component': 'controller' };
    const webhooks = props.webhooks;
    const webhookVolume = { name: 'webhook-certs', secret: { secretName: WEBHOOK_TLS_SECRET } };
    const mail = props.mail;
    const mailVolumes = mail ? [{ name: 'crownmail-configs', secret: { secretName: mail.configSecret } }, ...(mail.templatesConfigMap ? [{ name: 'crownmail-templates', configMap: { name: mail.templatesConfigMap } }] : [])] : [];
    const mailMounts = mailVolumes.map((v) => ({ name: v.name, mountPath: v.name === 'crownmail-configs' ? MAIL_CONFIG_DIR : MAIL_TEMPLATE_DIR, readOnly: true }));
    const mailArgs = mail ? ['--enable-inactivity-notifications', '--mail-config-dir', MAIL_CONFIG_DIR, ...(mail.templatesConfigMap ? ['--mail-template-dir', MAIL_TEMPLATE_DIR] : [])] : [];
    const webhookArgs = webhooks ? ['--webhook-cert-dir', WEBHOOK_CERT_DIR] : ['--webhook-port', '0'];
    const secretEnv = (envName: string, key: string): k8s.EnvVar => ({ name: envName, valueFrom: { secretKeyRef: { name: props.secretName, key, optional: true } } });
    const port = (p: string) => k8s.IntOrString.fromString(p);
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name, namespace: ns, labels },
      spec: {
        replicas: props.replicas,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: props.serviceAccountName,
            securityContext: POD_SECURITY,
            volumes: [{ name: 'config', configMap: { name: props.configMapName } }, TMP_VOLUME, ...(webhooks ? [webhookVolume] : []), ...mailVolumes],
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
                  ...(props.extraArgs ?? []),
                  ...mailArgs,
                  ...webhookArgs,
                  '--enable-leader-election',
                  '--leader-election-id',
                  props.leaseName,
                  '--leader-election-namespace',
                  ns,
                  '--metrics-addr',
                  `:${PORTS.metrics}`,
                  // HTTPS, for bearer tokens allowed `get /metrics` (docs/deploy.md, "Metrics").
                  '--metrics-secure',
                  '--health-probe-addr',
                  `:${PORTS.health}`,
                ],
                env: [
                  { name: 'MALLOC_ARENA_MAX', value: CONTROLLER_MALLOC_ARENA_MAX },
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
                livenessProbe: { httpGet: { path: '/healthz', port: port('health') }, periodSeconds: 20 },
                readinessProbe: { httpGet: { path: '/healthz', port: port('health') }, periodSeconds: 10 },
                resources: {
                  requests: { cpu: k8s.Quantity.fromString(props.resources.cpu), memory: k8s.Quantity.fromString(props.resources.memory) },
                  limits: { memory: k8s.Quantity.fromString(props.resources.memory) },
                },
                volumeMounts: [
                  { name: 'config', mountPath: CONFIG_MOUNT, readOnly: true },
                  TMP_MOUNT,
                  ...(webhooks ? [{ name: webhookVolume.name, mountPath: WEBHOOK_CERT_DIR, readOnly: true }] : []),
                  ...mailMounts,
                ],
                securityContext: containerSecurity(),
              },
            ],
          },
        },
      },
    });
    new k8s.KubeService(this, 'service', {
      metadata: { name, namespace: ns, labels },
      spec: {
        selector,
        ports: [
          { name: METRICS_PORT_NAME, port: PORTS.metrics, targetPort: port('metrics'), protocol: 'TCP' },
          { name: 'webhook', port: 443, targetPort: port('webhook'), protocol: 'TCP' },
        ],
      },
    });
    new k8s.KubePodDisruptionBudget(this, 'pdb', {
      metadata: { name, namespace: ns, labels },
      spec: { minAvailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector }, unhealthyPodEvictionPolicy: 'AlwaysAllow' },
    });
    // ─── WEBHOOK CONFIGURATIONS: the one place TenantWebhooks is instantiated (see docs/deploy.md, "Webhooks") ───
    // The certificate comes from cert-manager (`platformWebhookCertificate`, cainjector) or from
    // a given CA bundle (`platformWebhookCaBundle`); the Service above routes 443 to the pod's 9443.
    if (webhooks)
      webhooks.render(this, 'webhooks', {
        service: { namespace: ns, name, port: 443 },
        namespaceLabel: { key: props.targetLabelKey, value: props.shard },
        ...(webhooks.caBundle ? { caBundle: webhooks.caBundle } : {}),
        ...(webhooks.certificate ? { certManagerCertificate: webhooks.certificate } : {}),
        namePrefix: `${name}-`,
      });
  }
}
