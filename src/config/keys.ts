import { API_LEVELS, DEFAULT_API_LEVEL } from '../inputs/api-level.ts';
/**
 * Every configuration key in one table: its flag (CrownLabs' flag name where one exists), its
 * environment variable (CROWNLABS_ + the key in UPPER_SNAKE), its default (the upstream default of
 * docs/behaviour.md §2 unless a note says otherwise) and how a string value is parsed.
 * The config file uses the same keys (camelCase) with YAML values.
 */

export type ValueType = 'string' | 'int' | 'bool' | 'kvmap' | 'label' | 'list' | 'quantity' | 'enum' | 'bytes';

/** What a value must be beyond its type (each name is a check in src/config/config.ts). */
export type ValueCheck =
  | 'secret-seed'
  | 'dns-name'
  | 'dns-label'
  | 'object-name'
  | 'rbac-name'
  | 'url'
  | 'git-url'
  | 'host-port'
  | 'registry'
  | 'nfs-server'
  | 'image'
  | 'image-repository'
  | 'image-tag'
  | 'absolute-path'
  | 'mydrive-path-template'
  | 'relative-path'
  | 'namespaced-name'
  | 'base64'
  | 'non-empty'
  | 'positive'
  | 'workspace-name'
  | 'shard'
  | 'ip-pool'
  | 'annotation-key';

export interface ConfigKeyDef {
  key: string;
  /** Empty: no flag (the value is read from the environment only). */
  flag: string;
  type: ValueType;
  default: unknown;
  doc: string;
  enumValues?: readonly string[];
  /** A further check of the parsed value (src/config/config.ts, VALUE_CHECKS). */
  check?: ValueCheck;
  /** A secret: never rendered into the platform ConfigMap; the controller reads it from the Secret. */
  secret?: boolean;
  /** Read only from the environment: refused in the config file, no flag (command lines are visible to every user of a machine). */
  envOnly?: boolean;
  /** A kvmap of annotations: any string is a value (a label value is checked otherwise). */
  annotationValues?: boolean;
  /** Left out of the platform ConfigMap while at its default (keys added later: existing installs render as before). */
  omitWhenDefault?: boolean;
}

/** Shortest cookie secret seed accepted (oauth2-proxy's own cookie secrets are 32 bytes). */
export const MIN_SEED_LENGTH = 32;

export const AUTH_MODES = ['shared', 'per-instance'] as const;
/** How running environments are reached (src/model/exposition.ts says what each renders). */
export const EXPOSITION_MODES = ['ingress', 'gateway', 'both'] as const;
export const STOPPED_EPHEMERAL_MODES = ['keep-running', 'release'] as const;
export const POD_SECURITY_LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export const GITOPS_SECRET_MODES = ['existing', 'external-secret', 'sealed-secret'] as const;

export const CONFIG_KEYS = [
  // --- Input files (-f) ---
  { key: 'apiLevel', flag: '--api-level', type: 'enum', enumValues: API_LEVELS, default: DEFAULT_API_LEVEL, doc: 'The CrownLabs API the inputs follow (docs/behaviour.md §16): "2e8aeb9" (the operators of July 2023) or "e62be9e" (August 2026: same groups and versions, schemas changed in place, SharedVolume). Inputs are validated against that level\'s CRDs and status is written in its shape. The controller takes the level from the CRDs installed in the cluster instead.' },
  { key: 'inputMaxFileSize', flag: '--input-max-file-size', type: 'bytes', default: '16Mi', doc: 'Most bytes one input file may hold (e.g. 512Ki, 64Mi; at most 1Gi); a larger file is an input error. Only regular files are read: a FIFO or device named with -f is an error, one inside a folder is skipped with a warning.' },
  // --- Instances (instance-operator, docs/behaviour.md §2.2) ---
  { key: 'websiteBaseUrl', flag: '--website-base-url', type: 'string', check: 'dns-name', default: 'crownlabs.polito.it', doc: 'Ingress host of instances (bare hostname); Exam/Exercise modes prefix it with exam./exercise.' },
  { key: 'instancesAuthUrl', flag: '--instances-auth-url', type: 'string', check: 'url', default: '', doc: 'Base URL of the shared oauth2-proxy used by nginx external auth (auth mode "shared"). Empty: no auth annotations.' },
  { key: 'namespaceWhitelist', flag: '--namespace-whitelist', type: 'kvmap', default: { 'crownlabs.polito.it/operator-selector': 'production' }, doc: 'Labels (k1=v1&k2=v2) a namespace must have for its Instances to be rendered. Empty: every namespace. Default is the Helm chart value; the bare flag default `production=true` would reject the tenant namespaces we render.' },
  { key: 'containerEnvSidecarsTag', flag: '--container-env-sidecars-tag', type: 'string', check: 'image-tag', default: 'latest', doc: 'Tag appended to every sidecar/helper image.' },
  { key: 'containerEnvXVncImg', flag: '--container-env-x-vnc-img', type: 'string', check: 'image-repository', default: 'crownlabs/tigervnc', doc: 'Xvnc image of Container environments.' },
  { key: 'containerEnvWebsockifyImg', flag: '--container-env-websockify-img', type: 'string', check: 'image-repository', default: 'crownlabs/websockify', doc: 'websockify image of Container environments.' },
  { key: 'containerEnvContentDownloaderImg', flag: '--container-env-content-downloader-img', type: 'string', check: 'image-repository', default: 'crownlabs/content-downloader', doc: 'Content downloader init container image (upstream flag default is the literal "latest", docs/behaviour.md §14.11; we use the Helm value).' },
  { key: 'containerEnvContentUploaderImg', flag: '--container-env-content-uploader-img', type: 'string', check: 'image-repository', default: 'crownlabs/content-uploader', doc: 'Content uploader (submission Job) image (Helm value, as above).' },
  { key: 'containerEnvInstmetricsServerEndpoint', flag: '--container-env-instmetrics-server-endpoint', type: 'string', check: 'host-port', default: 'instmetrics:9090', doc: 'Endpoint passed to websockify.' },
  { key: 'vmRegistry', flag: '--vm-registry', type: 'string', check: 'registry', default: '', doc: 'Registry host that instance snapshots are pushed to.' },
  { key: 'vmRegistrySecret', flag: '--vm-registry-secret', type: 'string', check: 'object-name', default: '', doc: 'dockerconfigjson Secret used by kaniko to push snapshots.' },
  { key: 'containerExportImg', flag: '--container-export-img', type: 'string', check: 'image', default: 'crownlabs/img-exporter', doc: 'Snapshot export init container image (used verbatim).' },
  { key: 'containerKanikoImg', flag: '--container-kaniko-img', type: 'string', check: 'image', default: 'gcr.io/kaniko-project/executor', doc: 'kaniko image of the snapshot Job (used verbatim).' },
  { key: 'stoppedEphemeral', flag: '--stopped-ephemeral', type: 'enum', enumValues: STOPPED_EPHEMERAL_MODES, default: 'keep-running', doc: 'What `running: false` does to the workload of an ephemeral (non-persistent) Instance (docs/behaviour.md Decision 9). "keep-running" (upstream): only its Service and Ingresses go and its phase is Off; its Deployment keeps 1 replica and its VirtualMachineInstance keeps running, so nothing in the emptyDir or the VM\'s disk is lost. "release": the Deployment is scaled to 0 and the VirtualMachineInstance deleted (also one the Go operators left running), freeing their compute and deleting their data.' },
  { key: 'publicExposureIpPool', flag: '--public-exposure-ip-pool', type: 'list', check: 'ip-pool', default: [], omitWhenDefault: true, doc: 'IPv4 addresses the LoadBalancer Services of public exposure take theirs from (docs/behaviour.md §18, API level e62be9e): single addresses, ranges (a-b) and CIDRs (every address of the block), as upstream. Empty: public exposure is off, and an Instance asking for it gets phase Error in status.publicExposure and a Warning Event.' },
  { key: 'publicExposureCommonAnnotations', flag: '--public-exposure-common-annotations', type: 'kvmap', annotationValues: true, default: {}, omitWhenDefault: true, doc: 'Annotations (k1=v1&k2=v2, any value) put on every public-exposure LoadBalancer Service (upstream\'s Helm value: metallb.universe.tf/allow-shared-ip=pe; items are joined with & here, where upstream\'s flag uses commas).' },
  { key: 'publicExposureCommonLabels', flag: '--public-exposure-common-labels', type: 'kvmap', default: {}, omitWhenDefault: true, doc: 'Labels (k1=v1&k2=v2) put on every public-exposure LoadBalancer Service, besides crownlabs.polito.it/component=pe.' },
  { key: 'publicExposureLoadbalancerIpsKey', flag: '--public-exposure-loadbalancer-ips-key', type: 'string', check: 'annotation-key', default: 'metallb.universe.tf/loadBalancerIPs', omitWhenDefault: true, doc: 'Annotation of a public-exposure Service holding the address chosen for it (MetalLB\'s; Cilium\'s is lbipam.cilium.io/ips).' },
  // --- Authentication in front of instance GUIs (docs/behaviour.md Decision 2) ---
  { key: 'authMode', flag: '--auth-mode', type: 'enum', enumValues: AUTH_MODES, default: 'shared', doc: '"shared": nginx external-auth annotations to a shared oauth2-proxy (upstream); "per-instance": an oauth2-proxy Deployment+Service in front of each exposed GUI, admitting only the owner and the workspace managers.' },
  { key: 'exposition', flag: '--exposition', type: 'enum', enumValues: EXPOSITION_MODES, default: 'ingress', doc: 'How a running environment\'s GUI is reached (docs/behaviour.md §17): "ingress" (an Ingress, nginx annotations; upstream\'s default), "gateway" (a Gateway API HTTPRoute attached to gatewayRef; upstream\'s `--gateway-api-mode`), or "both" while a cluster moves from one to the other. Switching to "gateway", the controller keeps each Ingress until its HTTPRoute is Accepted.' },
  { key: 'gatewayRef', flag: '--gateway-api-refs-values', type: 'string', check: 'namespaced-name', default: '', doc: 'The Gateway ("namespace/name") every HTTPRoute attaches to. Required by exposition "gateway" and "both".' },
  { key: 'platformGatewayAuth', flag: '--platform-gateway-auth', type: 'bool', default: true, doc: 'With exposition "gateway" or "both" and authMode "shared": render the Envoy Gateway SecurityPolicy (OIDC with oidcIssuerUrl and oidcClientId; client secret in the Secret crownlabs-gateway-oidc, key client-secret, of the Gateway\'s namespace) that authenticates every route of the Gateway, as upstream\'s chart does. Off when the cluster already has one.' },
  { key: 'oauth2ProxyImage', flag: '--oauth2-proxy-image', type: 'string', check: 'image', default: 'quay.io/oauth2-proxy/oauth2-proxy:v7.6.0', doc: 'oauth2-proxy image (per-instance auth mode).' },
  { key: 'oidcIssuerUrl', flag: '--oidc-issuer-url', type: 'string', check: 'url', default: 'https://auth.crownlabs.polito.it/realms/crownlabs', doc: 'OIDC issuer of the per-instance oauth2-proxy.' },
  { key: 'oidcClientId', flag: '--oidc-client-id', type: 'string', check: 'non-empty', default: 'k8s', doc: 'OIDC client id of the per-instance oauth2-proxy.' },
  { key: 'oidcClientSecret', flag: '--oidc-client-secret', type: 'string', default: '', secret: true, doc: 'OIDC client secret of the per-instance oauth2-proxy (written into the per-instance Secret; never into gitops).' },
  { key: 'cookieSecretSeed', flag: '', type: 'string', default: '', check: 'secret-seed', secret: true, envOnly: true, doc: 'Secret seed (at least 32 characters, e.g. `openssl rand -hex 32`) from which each per-instance oauth2-proxy cookie secret is derived (HMAC of the Instance UID and environment), keeping the composition deterministic. Environment only, never in the config file or the ConfigMap; the controller reads it from the Secret `crownlabs-composer-secrets` (key `cookieSecretSeed`). Required by authMode "per-instance" for `synth`, `validate` and the controller; `gitops` writes no Secret values and does not need it.' },
  // --- Tenants and workspaces (tenant-operator, docs/behaviour.md §2.1) ---
  { key: 'targetLabel', flag: '--target-label', type: 'label', default: 'crownlabs.polito.it/operator-selector=production', doc: 'key=value: only Tenants/Workspaces carrying it are rendered, and it is stamped on their children (sandbox objects excepted). Default is the Helm chart value.' },
  { key: 'mydrivePvcsSize', flag: '--mydrive-pvcs-size', type: 'quantity', check: 'positive', default: '1Gi', doc: 'MyDrive PVC size.' },
  { key: 'mydrivePvcsStorageClassName', flag: '--mydrive-pvcs-storage-class-name', type: 'string', check: 'object-name', default: 'rook-nfs', doc: 'MyDrive storage class.' },
  { key: 'sharedVolumeStorageClass', flag: '--shared-volume-storage-class', type: 'string', check: 'object-name', default: 'rook-nfs', doc: 'API level e62be9e: StorageClass of every SharedVolume\'s claim (docs/behaviour.md §16.7).' },
  { key: 'volumeProvisioningImg', flag: '--volume-provisioning-img', type: 'string', check: 'image', default: 'busybox', doc: 'API level e62be9e: image of the Job that gives a new SharedVolume or MyDrive to the CrownLabs user (uid 1010) with `chown -R`; upstream hard-codes busybox.' },
  { key: 'mirrorStorageClass', flag: '--mirror-storage-class', type: 'string', check: 'object-name', default: 'pvc-mirror', doc: 'API level e62be9e: StorageClass of the mirror claims through which an Instance mounts a SharedVolume from its workspace namespace (docs/behaviour.md §16.7); the PVC mirror provisioner serves it.' },
  { key: 'mydrivePvcsNamespace', flag: '--mydrive-pvcs-namespace', type: 'string', check: 'dns-label', default: 'mydrive-pvcs', doc: 'Namespace of the MyDrive PVCs.' },
  { key: 'mydriveNfsServerName', flag: '--mydrive-nfs-server-name', type: 'string', check: 'nfs-server', default: '', doc: 'NFS server name written into each tenant\'s mydrive-info Secret when rendering from files (no bound PV to read). Empty: the Secret is not rendered from files.' },
  { key: 'mydriveNfsPathTemplate', flag: '--mydrive-nfs-path-template', type: 'string', check: 'mydrive-path-template', default: '/mydrive/{tenant}', doc: 'Per-tenant NFS export path when rendering from files; {tenant} is the canonical tenant name, {pvc} the PVC name (any other {…} is an error).' },
  { key: 'sandboxClusterRole', flag: '--sandbox-cluster-role', type: 'string', check: 'rbac-name', default: 'crownlabs-sandbox', doc: 'ClusterRole bound in sandbox namespaces.' },
  { key: 'sandboxPodSecurity', flag: '--sandbox-pod-security', type: 'enum', enumValues: POD_SECURITY_LEVELS, default: 'baseline', doc: 'Pod Security level enforced in sandbox namespaces (label `pod-security.kubernetes.io/enforce`, docs/behaviour.md §5.5): "baseline" refuses privileged, host-namespace and hostPath pods; "privileged" enforces nothing (upstream, which sets no label).' },
  { key: 'baseWorkspaces', flag: '--base-workspaces', type: 'list', check: 'workspace-name', default: [], doc: 'Workspaces every tenant is enrolled in by the mutating webhook; they do not count for no-workspaces.' },
  { key: 'capCpu', flag: '--cap-cpu', type: 'quantity', default: '25', doc: 'Cap of a tenant\'s summed CPU quota (applied when the sum reaches it).' },
  { key: 'capMemory', flag: '--cap-memory', type: 'quantity', default: '50G', doc: 'Cap of a tenant\'s summed memory quota.' },
  { key: 'capInstances', flag: '--cap-instances', type: 'int', default: 10, doc: 'Cap of a tenant\'s summed instance count.' },
  { key: 'keycloakUrl', flag: '--keycloak-url', type: 'string', check: 'url', default: '', doc: 'Keycloak base URL. Empty: Keycloak integration disabled.' },
  { key: 'keycloakLoginRealm', flag: '--kc-login-realm', type: 'string', default: '', doc: 'Realm of the admin login.' },
  { key: 'keycloakTargetRealm', flag: '--kc-target-realm', type: 'string', default: '', doc: 'Realm where users and roles live.' },
  { key: 'keycloakTargetClient', flag: '--kc-target-client', type: 'string', default: '', doc: 'clientId whose client roles are managed.' },
  { key: 'keycloakUser', flag: '--kc-tenant-operator-user', type: 'string', default: '', doc: 'Keycloak admin user.' },
  { key: 'keycloakPassword', flag: '--kc-tenant-operator-psw', type: 'string', default: '', secret: true, doc: 'Keycloak admin password (prefer the environment variable).' },
  // --- GitOps sink ---
  { key: 'gitopsRepoUrl', flag: '--gitops-repo-url', type: 'string', check: 'git-url', default: '', doc: 'Git repository Argo CD reads the gitops tree from. Required by `gitops` and `manifests --argocd-application`: no placeholder default, an Application reading a made-up repository would sync nothing.' },
  { key: 'gitopsRevision', flag: '--gitops-revision', type: 'string', check: 'non-empty', default: 'HEAD', doc: 'Git revision Argo CD tracks.' },
  { key: 'gitopsPath', flag: '--gitops-path', type: 'string', check: 'relative-path', default: 'gitops', doc: 'Path of the gitops tree inside that repository.' },
  { key: 'argocdNamespace', flag: '--argocd-namespace', type: 'string', check: 'dns-label', default: 'argocd', doc: 'Namespace of Argo CD (where the Applications live).' },
  { key: 'argocdProject', flag: '--argocd-project', type: 'string', check: 'object-name', default: 'crownlabs', doc: 'Argo CD project of the generated Applications (rendered with the tree).' },
  { key: 'gitopsMaxObjectsPerApp', flag: '--gitops-max-objects-per-app', type: 'int', check: 'positive', default: 250, doc: 'Most objects one Argo CD Application holds; a namespace with more instance objects is split.' },
  { key: 'gitopsSecretStore', flag: '--gitops-secret-store', type: 'string', check: 'object-name', default: 'crownlabs', doc: 'ClusterSecretStore the ExternalSecrets read from (secret mode "external-secret").' },
  { key: 'gitopsSecretMode', flag: '--gitops-secret-mode', type: 'enum', enumValues: GITOPS_SECRET_MODES, default: 'existing', doc: 'How the gitops tree refers to Secrets without their values: "existing" (expect the Secret in the cluster), "external-secret" (an ExternalSecret), "sealed-secret" (a SealedSecret placeholder).' },
  // --- Platform install (`crownlabs manifests`, the `platform` chart of `cdk8s synth`) ---
  { key: 'platformNamespace', flag: '--platform-namespace', type: 'string', check: 'dns-label', default: 'crownlabs-composer', doc: 'Namespace of the controller, the image-list updater, their ConfigMap and leader-election Leases.' },
  { key: 'platformImage', flag: '--platform-image', type: 'string', check: 'image', default: 'ghcr.io/crownlabs/crownlabs-composer:0.1.0', doc: 'Image of this project (the Dockerfile): runs the controller, the image-list updater and the bastion sidecars.' },
  { key: 'platformShards', flag: '--platform-shards', type: 'list', check: 'shard', default: [], doc: 'Values of the targetLabel key: one controller Deployment (and Lease) per value, each rendering only the Tenants/Workspaces carrying it. Empty: one controller for the targetLabel value.' },
  { key: 'platformInstanceAutomation', flag: '--platform-instance-automation', type: 'list', enumValues: ['termination', 'submission', 'expiration', 'inactive-termination'], default: [], doc: 'Instance automation (docs/behaviour.md §8) the controller Deployments run (`--enable-instance-<name>`); the derived role gains what each one writes.' },
  { key: 'platformPrometheusUrl', flag: '--platform-prometheus-url', type: 'string', check: 'url', default: '', doc: 'Prometheus the inactivity automation reads activity from (`--monitoring-prometheus-url`). Empty: the flag\'s default, the kube-prometheus-stack Service.' },
  { key: 'platformMailSecret', flag: '--platform-mail-secret', type: 'string', check: 'object-name', default: '', doc: 'Secret (in platformNamespace) holding `smtp-config.yaml`, as upstream\'s crownmail chart writes it: the inactivity automation warns tenants by e-mail (docs/behaviour.md §8.5). Empty: no mail.' },
  { key: 'platformMailTemplates', flag: '--platform-mail-templates', type: 'string', check: 'object-name', default: '', doc: 'ConfigMap (in platformNamespace) of mail templates overriding the built-in wording, as upstream\'s crownmail chart writes it. Empty: the built-in wording.' },
  { key: 'platformControllerReplicas', flag: '--platform-controller-replicas', type: 'int', default: 2, doc: 'Replicas of each controller Deployment (leader election keeps one active; the PodDisruptionBudget keeps one up).' },
  { key: 'platformControllerCpu', flag: '--platform-controller-cpu', type: 'quantity', check: 'positive', default: '200m', doc: 'CPU request of a controller pod.' },
  { key: 'platformControllerMemory', flag: '--platform-controller-memory', type: 'quantity', check: 'positive', default: '512Mi', doc: 'Memory request and limit of a controller pod.' },
  { key: 'platformLabelWriters', flag: '--platform-label-writers', type: 'list', default: [], doc: 'Users (`system:serviceaccount:<ns>:<name>`) besides the controller and Argo CD\'s application controller who may write our managed-by label and parent annotation outside tenant and workspace namespaces (the crownlabs-composer-labels admission policy).' },
  { key: 'platformInstallCrds', flag: '--platform-install-crds', type: 'bool', default: true, doc: 'Render the CrownLabs CRDs (vendored in imports/crds).' },
  { key: 'platformServiceMonitor', flag: '--platform-service-monitor', type: 'bool', default: false, doc: 'Render a ServiceMonitor (monitoring.coreos.com/v1) scraping the controllers and the bastion tracker.' },
  { key: 'platformWebhookCertificate', flag: '--platform-webhook-certificate', type: 'string', check: 'namespaced-name', default: '', doc: 'cert-manager Certificate ("namespace/name") whose CA cert-manager injects into the webhook configurations. Empty: use platformWebhookCaBundle.' },
  { key: 'platformWebhookCaBundle', flag: '--platform-webhook-ca-bundle', type: 'string', check: 'base64', default: '', doc: 'Base64 PEM CA bundle of the webhook serving certificate, when cert-manager is not used.' },
  { key: 'platformBastion', flag: '--platform-bastion', type: 'bool', default: true, doc: 'Render the SSH bastion (sshd, authorized-keys sidecar, SSH tracker) in namespace crownlabs-bastion.' },
  { key: 'platformBastionSshdImage', flag: '--platform-bastion-sshd-image', type: 'string', check: 'image', default: 'crownlabs/ssh-bastion:latest', doc: 'sshd image of the bastion.' },
  { key: 'platformImageListRegistryUrl', flag: '--platform-image-list-registry-url', type: 'string', check: 'url', default: '', doc: 'Registry URL of the image-list updater. Empty: no updater is rendered.' },
  { key: 'platformImageListName', flag: '--platform-image-list-name', type: 'string', check: 'object-name', default: 'crownlabs-virtual-machine-images', doc: 'ImageList the updater writes.' },
  { key: 'platformImageListAdvertisedRegistryName', flag: '--platform-image-list-advertised-registry-name', type: 'string', check: 'registry', default: 'registry.internal.crownlabs.polito.it', doc: 'Registry name the updater writes into the ImageList.' },
  { key: 'platformImageListUpdateInterval', flag: '--platform-image-list-update-interval', type: 'int', check: 'positive', default: 60, doc: 'Seconds between two passes of the updater.' },
] as const satisfies readonly ConfigKeyDef[];

export type ConfigKey = (typeof CONFIG_KEYS)[number]['key'];

export function envVarName(key: string): string {
  return `CROWNLABS_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}
