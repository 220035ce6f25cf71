import type { ApiObjectProps } from 'cdk8s';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { ControllerRbac } from './controller-rbac.ts';
import { ControllerShard, METRICS_PORT_NAME, type WebhookWiring, type ControllerShardProps } from './controller-shard.ts';
import { CrownLabsCrds } from './crownlabs-crds.ts';
import { ComposerLabelPolicy } from './composer-label-policy.ts';
import { FrozenTemplatePolicy } from './frozen-template-policy.ts';
import { ImageListUpdater } from './image-list-updater.ts';
import { InstanceAdmissionPolicy } from './instance-admission-policy.ts';
import { MetricsReaderRole } from './metrics-reader-role.ts';
import { MetricsServiceMonitor } from './metrics-service-monitor.ts';
import { BASTION_NAMESPACE, PlatformBastion } from './platform-bastion.ts';
import { SandboxAdmissionPolicies } from './sandbox-admission-policies.ts';
import { GatewayAuthPolicy, type GatewayAuthPolicyProps } from './gateway-auth-policy.ts';

export interface PlatformInstallProps {
  readonly namespace: string;
  readonly image: string;
  /**
   * The CrownLabs CRDs to install, parsed (src/platform/install.ts reads the vendored files).
   * @default none: no CRD is rendered
   */
  readonly crds?: readonly ApiObjectProps[];
  /** One controller per value of `targetLabelKey`. */
  readonly targetLabelKey: string;
  readonly shards: readonly string[];
  /**
   * Per shard: extra controller flags (e.g. its namespace whitelist).
   * @default none
   */
  readonly shardArgs?: (shard: string) => string[];
  readonly controllerReplicas: number;
  readonly controllerResources: { cpu: string; memory: string };
  /** The configuration file of every component (ConfigMap `<namespace>/crownlabs-composer-config`). */
  readonly configYaml: string;
  /** Secret holding `keycloakPassword` / `oidcClientSecret` / `cookieSecretSeed` (optional keys). */
  readonly secretName: string;
  /** The controllers' tenant mail (ControllerShardProps.mail). @default no mail */
  readonly mail?: ControllerShardProps['mail'];
  readonly controllerRules: k8s.PolicyRule[];
  /**
   * Hosts of the lab no sandbox Ingress may claim (SandboxAdmissionPolicies).
   * @default none: only the other sandbox checks
   */
  readonly labHosts?: readonly string[];
  readonly leaseRules: k8s.PolicyRule[];
  readonly leaseName: (shard: string) => string;
  readonly serviceMonitor: boolean;
  /**
   * Base64 PEM of the CA that signed the webhooks' serving certificate.
   * @default none: the webhooks need `webhookCertificate` instead
   */
  readonly webhookCaBundle?: string;
  /**
   * cert-manager Certificate `namespace/name` whose CA the cainjector puts into the webhook configurations.
   * @default none: the webhooks need `webhookCaBundle` instead
   */
  readonly webhookCertificate?: string;
  /**
   * Instantiates the webhook configurations of a shard (TenantWebhooks); rendered only with
   * `webhookCaBundle` or `webhookCertificate` (with failurePolicy Fail, an untrusted endpoint
   * would refuse every Tenant write).
   * @default none: no webhook configuration, the controllers' webhook server off
   */
  readonly webhooks?: (scope: Construct, id: string, props: WebhookWiring) => void;
  /**
   * The SSH bastion (PlatformBastion), in namespace crownlabs-bastion.
   * @default none: no bastion
   */
  readonly bastion?: { sshdImage: string; rules: k8s.PolicyRule[] };
  /**
   * The image-list updater (ImageListUpdater).
   * @default none: no updater
   */
  readonly imageList?: { registryUrl: string; name: string; advertisedRegistryName: string; updateIntervalSeconds: number; rules: k8s.PolicyRule[] };
  /**
   * The ComposerLabelPolicy: the resources it checks (those the controller watches by our label)
   * and the users besides the controller who may write our label and parent annotation outside
   * tenant and workspace namespaces (Argo CD's application controller).
   * @default none: no policy
   */
  readonly labelPolicy?: { resources: { group: string; resources: string[] }[]; writers: readonly string[]; mydrivePvcsNamespace: string };
  /**
   * The OIDC SecurityPolicy of the Gateway the instance routes attach to (GatewayAuthPolicy).
   * @default none: no policy
   */
  readonly gatewayAuth?: Omit<GatewayAuthPolicyProps, 'labels'>;
}

const CONTROLLER = 'crownlabs-controller';
const CONFIG_MAP = 'crownlabs-composer-config';

/**
 * The whole install of crownlabs-composer (issue 8): CRDs, namespace, ConfigMap, the controller's
 * RBAC and one ControllerShard per shard, the ImageListUpdater, the PlatformBastion, and an
 * optional ServiceMonitor. Rules and CRDs come in as props: src/platform computes and reads them.
 */
export class PlatformInstall extends Construct {
  constructor(scope: Construct, id: string, props: PlatformInstallProps) {
    super(scope, id);
    const ns = props.namespace;
    const part = { 'app.kubernetes.io/part-of': 'crownlabs' };
    if (props.crds?.length) new CrownLabsCrds(this, 'crds', { crds: props.crds });
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: ns, labels: { ...part, 'pod-security.kubernetes.io/enforce': 'restricted' } } });
    new k8s.KubeConfigMap(this, 'config', { metadata: { name: CONFIG_MAP, namespace: ns, labels: part }, data: { 'config.yaml': props.configYaml } });

    const ctlLabels = { ...part, 'app.kubernetes.io/name': CONTROLLER };
    const rbac = new ControllerRbac(this, 'controller-rbac', { name: CONTROLLER, namespace: ns, labels: ctlLabels, rules: props.controllerRules, leaseRules: props.leaseRules });
    new MetricsReaderRole(this, 'metrics-reader', { name: CONTROLLER, labels: ctlLabels });
    // The controller renders Instances from their frozen Template spec: only it may write that.
    new FrozenTemplatePolicy(this, 'frozen-template-policy', { writers: [`system:serviceaccount:${ns}:${rbac.serviceAccountName}`], labels: part });
    // The controller caches objects by our label cluster-wide: only its writers may set it where tenants write.
    if (props.labelPolicy) {
      const { writers, ...policy } = props.labelPolicy;
      new ComposerLabelPolicy(this, 'composer-label-policy', { ...policy, writers: [`system:serviceaccount:${ns}:${rbac.serviceAccountName}`, ...writers], labels: part });
    }
    // Names, owner and Template of an Instance that students and managers may not choose.
    new InstanceAdmissionPolicy(this, 'instance-admission-policy', { writers: [`system:serviceaccount:${ns}:${rbac.serviceAccountName}`], labels: part });
    // Sandboxes may create Services and Ingresses: not ones that relay to other tenants or claim the lab's hosts.
    new SandboxAdmissionPolicies(this, 'sandbox-policies', { labHosts: props.labHosts ?? [], labels: part });
    const webhooks =
      props.webhooks && (props.webhookCaBundle || props.webhookCertificate) ? { caBundle: props.webhookCaBundle, certificate: props.webhookCertificate, render: props.webhooks } : undefined;
    for (const shard of props.shards) {
      new ControllerShard(this, `controller-${shard}`, {
        namespace: ns,
        name: CONTROLLER,
        shard,
        targetLabelKey: props.targetLabelKey,
        image: props.image,
        serviceAccountName: rbac.serviceAccountName,
        labels: ctlLabels,
        replicas: props.controllerReplicas,
        resources: props.controllerResources,
        configMapName: CONFIG_MAP,
        secretName: props.secretName,
        leaseName: props.leaseName(shard),
        extraArgs: props.shardArgs?.(shard),
        mail: props.mail,
        webhooks,
      });
    }

    if (props.imageList) {
      const il = props.imageList;
      new ImageListUpdater(this, 'imagelist', {
        namespace: ns,
        image: props.image,
        labels: part,
        secretName: props.secretName,
        registryUrl: il.registryUrl,
        imageListName: il.name,
        advertisedRegistryName: il.advertisedRegistryName,
        updateIntervalSeconds: il.updateIntervalSeconds,
        rules: il.rules,
      });
    }
    if (props.bastion) new PlatformBastion(this, 'bastion', { sshdImage: props.bastion.sshdImage, composerImage: props.image, labels: part, rules: props.bastion.rules });
    if (props.gatewayAuth) new GatewayAuthPolicy(this, 'gateway-auth', { ...props.gatewayAuth, labels: part });
    if (props.serviceMonitor) new MetricsServiceMonitor(this, 'service-monitor', { namespace: ns, labels: part, namespaces: [ns, ...(props.bastion ? [BASTION_NAMESPACE] : [])], securePort: METRICS_PORT_NAME });
  }
}
