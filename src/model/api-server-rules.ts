/**
 * What the API server checks beyond the OpenAPI schemas, for the fields we render.
 *
 * The OpenAPI v3 documents Kubernetes publishes carry types, formats and `required`, but no
 * enums, ranges or cross-field rules: those live in Go (`k8s.io/kubernetes/pkg/apis/<group>/validation`,
 * `k8s.io/apimachinery/pkg/api/validation` and `.../util/validation`). This module mirrors the
 * subset that matters for objects a composer renders, each rule naming the Go function it follows
 * (k8s.io/kubernetes@v1.37.2, the version of the vendored schemas). Rules are attached to schema
 * components by name, so a failure is reported at its exact field path wherever the component is
 * used. The KubeVirt rules follow virt-api's VMI admitter (`ValidateVirtualMachineInstanceSpec`).
 * The ajv keywords themselves are registered by `src/validate/rules/index.ts`, one module per rule
 * family; the pre-write checks of every sink (`src/compose/prewrite.ts`) use the same functions.
 */
import { isDns1123Label, isDns1123Subdomain, isHostName, isPathSegmentName, isPortName, isQualifiedName } from '../inputs/k8s-names.ts';
import { Quantity } from '../inputs/quantity.ts';

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value as Go's `resource.ParseQuantity` reads it, or undefined when it does not. */
export function quantity(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return Quantity.parse(v);
  } catch {
    return undefined;
  }
}

export function show(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

// --- k8s.io/apimachinery/pkg/util/validation (names are in src/inputs/k8s-names.ts) ---------------

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export const NAME_MESSAGES = {
  dns1123Label:
    "must be a lowercase RFC 1123 label: at most 63 lower case alphanumeric characters or '-', starting and ending with an alphanumeric character",
  dns1123Subdomain:
    "must be a lowercase RFC 1123 subdomain: at most 253 lower case alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character",
  pathSegment: "may not be '.' or '..' and may not contain '/' or '%'",
} as const;

/** Name rules by `apiVersion/kind` (ValidateObjectMeta's nameFn); a DNS-1123 subdomain otherwise. */
export const NAME_RULES: Record<string, 'label' | 'path-segment'> = {
  'v1/Namespace': 'label',
  // ValidateServiceCreate with RelaxedServiceNameValidation (GA, locked on, in 1.37): a DNS label.
  'v1/Service': 'label',
  'rbac.authorization.k8s.io/v1/Role': 'path-segment',
  'rbac.authorization.k8s.io/v1/ClusterRole': 'path-segment',
  'rbac.authorization.k8s.io/v1/RoleBinding': 'path-segment',
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': 'path-segment',
};

/** Why `name` is not a valid name of an `apiVersion/kind` object, or nothing when it is. */
export function nameProblem(apiVersion: string, kind: string, name: string): string | undefined {
  const rule = NAME_RULES[`${apiVersion}/${kind}`];
  if (rule === 'label') return isDns1123Label(name) ? undefined : NAME_MESSAGES.dns1123Label;
  if (rule === 'path-segment') return isPathSegmentName(name) ? undefined : NAME_MESSAGES.pathSegment;
  return isDns1123Subdomain(name) ? undefined : NAME_MESSAGES.dns1123Subdomain;
}

// --- formats ----------------------------------------------------------------------------------

/** Formats the rules below use, with the message a failing value gets. */
export const FORMATS: Record<string, { validate: (s: string) => boolean; message: string }> = {
  'k8s-dns1123-label': { validate: isDns1123Label, message: NAME_MESSAGES.dns1123Label },
  'k8s-dns1123-subdomain': { validate: isDns1123Subdomain, message: NAME_MESSAGES.dns1123Subdomain },
  'k8s-port-name': {
    validate: isPortName,
    message: "must be an IANA_SVC_NAME: at most 15 characters, a-z, 0-9 and '-', at least one letter, no '--', not starting or ending with '-'",
  },
  // networking validateIngressRules: a host is a DNS-1123 subdomain, `*.` allowed first, not an IP.
  'k8s-ingress-host': {
    validate: (s) => s === '' || (!IPV4.test(s) && !s.includes(':') && isHostName(s)),
    message: "must be a DNS-1123 subdomain, optionally starting with '*.', and not an IP address",
  },
  // validateIngressTLS: the same, but an IP is not refused.
  'k8s-tls-host': { validate: isHostName, message: "must be a DNS-1123 subdomain, optionally starting with '*.'" },
  // validateLimitRangeTypeName: a standard type, or a domain-prefixed one.
  'k8s-limit-range-type': {
    validate: (s) => ['Container', 'PersistentVolumeClaim', 'Pod'].includes(s) || (s.includes('/') && isQualifiedName(s)),
    message: 'must be a standard limit type (Container, PersistentVolumeClaim, Pod) or fully qualified',
  },
  // ValidateEnv (RelaxedEnvironmentVariableValidation, GA and locked since 1.34).
  'k8s-env-var-name': { validate: (s) => /^[ -<>-~]+$/.test(s), message: "must consist of printable ASCII characters other than '='" },
  // IsConfigMapKey (Secret and ConfigMap data keys).
  'k8s-config-key': {
    validate: (s) => s.length <= 253 && CONFIG_KEY.test(s) && s !== '.' && s !== '..' && !s.startsWith('..'),
    message: "a valid config key must consist of alphanumeric characters, '-', '_' or '.', and may not be '.', '..' or start with '..'",
  },
  'k8s-absolute-path': { validate: (s) => s.startsWith('/'), message: "must be an absolute path (start with '/')" },
};

// --- custom keywords --------------------------------------------------------------------------


const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);

/**
 * validateResourceRequirements / ValidateResourceQuantityValue of a container's resources, or
 * (`volume`) ValidatePersistentVolumeClaimSpec's, where only storage matters. Shared by
 * `validate` (an ajv keyword) and the pre-write checks of synth and gitops.
 */
export function resourceRequirementIssues(data: unknown, volume: boolean, push: (segments: (string | number)[], message: string) => void): void {
  if (!isObject(data)) return;
  const limits = isObject(data.limits) ? data.limits : {};
  const requests = isObject(data.requests) ? data.requests : {};
  for (const [part, map] of [['limits', limits], ['requests', requests]] as const) {
    for (const [name, value] of Object.entries(map)) {
      if (!volume && !STANDARD_CONTAINER_RESOURCES.has(name) && !name.startsWith('hugepages-') && !(name.includes('/') && isQualifiedName(name))) {
        push([part, name], `${show(name)} is not a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-*, or a domain-prefixed extended resource)`);
      }
      const q = quantity(value);
      if (q && q.sign() < 0) push([part, name], `${show(value)}: must be greater than or equal to 0`);
    }
  }
  for (const [name, value] of Object.entries(requests)) {
    const req = quantity(value);
    const lim = quantity(limits[name]);
    if (req && lim && req.cmp(lim) > 0) push(['requests', name], `${show(value)}: must be less than or equal to ${name} limit of ${lim.toString()}`);
  }
  if (volume && requests.storage !== undefined) {
    const storage = quantity(requests.storage);
    if (storage && storage.sign() <= 0) push(['requests', 'storage'], `${show(requests.storage)}: must be greater than zero`);
  }
}

/** A map of quantities (ResourceQuotaSpec.hard) where every amount must be non-negative. */
export function negativeQuantityIssues(data: unknown, push: (segments: (string | number)[], message: string) => void): void {
  if (!isObject(data)) return;
  for (const [name, value] of Object.entries(data)) {
    const q = quantity(value);
    if (q && q.sign() < 0) push([name], `${show(value)}: must be greater than or equal to 0`);
  }
}


// --- where the rules apply --------------------------------------------------------------------

export interface ComponentRule {
  /** Added to (merged with) the named properties' schemas. */
  properties?: Record<string, Record<string, unknown>>;
  /** Added to the component's `required`. */
  required?: string[];
  /** Keywords added to the component itself. */
  keywords?: Record<string, unknown>;
}

const PROTOCOL = { enum: ['SCTP', 'TCP', 'UDP'] };
const PORT = { k8sPortNumber: true };
const NON_NEGATIVE = { minimum: 0 };
const LABEL = { format: 'k8s-dns1123-label' };

/** Rules for Kubernetes OpenAPI components, by component name. */
export const K8S_RULES: Record<string, ComponentRule> = {
  // --- meta/v1
  'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta': { keywords: { k8sObjectMeta: true } },
  'io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector': { keywords: { k8sLabelSelector: true } },

  // --- core/v1 pods (ValidatePodSpec, validateContainers, validateContainerPorts, validateProbe, …)
  'io.k8s.api.core.v1.PodSpec': {
    properties: {
      restartPolicy: { enum: ['Always', 'Never', 'OnFailure'] },
      dnsPolicy: { enum: ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] },
      terminationGracePeriodSeconds: NON_NEGATIVE,
      activeDeadlineSeconds: { minimum: 1 },
      hostname: LABEL,
      subdomain: LABEL,
      serviceAccountName: { format: 'k8s-dns1123-subdomain' },
      priorityClassName: { format: 'k8s-dns1123-subdomain' },
    },
    keywords: { k8sPodSpec: true },
  },
  'io.k8s.api.core.v1.Container': {
    required: ['image'],
    properties: {
      name: LABEL,
      image: { minLength: 1 },
      imagePullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
      terminationMessagePolicy: { enum: ['FallbackToLogsOnError', 'File'] },
    },
  },
  'io.k8s.api.core.v1.ContainerPort': {
    properties: { containerPort: PORT, hostPort: { k8sPortNumber: { allowZero: true } }, protocol: PROTOCOL, name: { format: 'k8s-port-name' } },
  },
  'io.k8s.api.core.v1.EnvVar': { properties: { name: { format: 'k8s-env-var-name' } } },
  'io.k8s.api.core.v1.Probe': {
    properties: {
      initialDelaySeconds: NON_NEGATIVE,
      timeoutSeconds: NON_NEGATIVE,
      periodSeconds: NON_NEGATIVE,
      successThreshold: NON_NEGATIVE,
      failureThreshold: NON_NEGATIVE,
    },
  },
  'io.k8s.api.core.v1.HTTPGetAction': { properties: { port: { k8sPortOrName: true }, scheme: { enum: ['HTTP', 'HTTPS'] } } },
  'io.k8s.api.core.v1.TCPSocketAction': { properties: { port: { k8sPortOrName: true } } },
  'io.k8s.api.core.v1.GRPCAction': { properties: { port: PORT } },
  'io.k8s.api.core.v1.Volume': { properties: { name: LABEL } },
  'io.k8s.api.core.v1.VolumeMount': { properties: { mountPath: { minLength: 1 }, mountPropagation: { enum: ['Bidirectional', 'HostToContainer', 'None'] } } },
  'io.k8s.api.core.v1.ResourceRequirements': { keywords: { k8sResourceRequirements: true } },
  'io.k8s.api.core.v1.Toleration': { properties: { operator: { enum: ['Equal', 'Exists'] }, effect: { enum: ['NoExecute', 'NoSchedule', 'PreferNoSchedule'] } } },
  'io.k8s.api.core.v1.KeyToPath': { properties: { path: { minLength: 1 } } },

  // --- core/v1 services (validateService, validateServicePort)
  'io.k8s.api.core.v1.ServiceSpec': {
    properties: {
      type: { enum: ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'] },
      sessionAffinity: { enum: ['ClientIP', 'None'] },
      externalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      internalTrafficPolicy: { enum: ['Cluster', 'Local'] },
      ipFamilyPolicy: { enum: ['PreferDualStack', 'RequireDualStack', 'SingleStack'] },
    },
    keywords: { k8sServiceSpec: true },
  },
  'io.k8s.api.core.v1.ServicePort': {
    properties: { port: PORT, nodePort: { k8sPortNumber: { allowZero: true } }, protocol: PROTOCOL, name: LABEL, targetPort: { k8sPortOrName: { allowZero: true } } },
  },

  // --- core/v1 storage, quotas, secrets
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec': {
    properties: {
      accessModes: { minItems: 1, items: { enum: ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'] } },
      volumeMode: { enum: ['Block', 'Filesystem'] },
      // ValidatePersistentVolumeClaimSpec: resources[storage] is required and positive.
      resources: { required: ['requests'], properties: { requests: { required: ['storage'] } } },
    },
    required: ['accessModes', 'resources'],
  },
  'io.k8s.api.core.v1.VolumeResourceRequirements': { keywords: { k8sResourceRequirements: { volume: true } } },
  'io.k8s.api.core.v1.ResourceQuotaSpec': { properties: { hard: { k8sNonNegativeQuantities: true } } },
  'io.k8s.api.core.v1.LimitRangeItem': { properties: { type: { format: 'k8s-limit-range-type' } }, keywords: { k8sLimitRangeItem: true } },
  'io.k8s.api.core.v1.Secret': {
    properties: { data: { propertyNames: { format: 'k8s-config-key' } }, stringData: { propertyNames: { format: 'k8s-config-key' } } },
  },
  'io.k8s.api.core.v1.ConfigMap': {
    properties: { data: { propertyNames: { format: 'k8s-config-key' } }, binaryData: { propertyNames: { format: 'k8s-config-key' } } },
  },

  // --- apps/v1 (ValidateDeploymentSpec, ValidateDeploymentStrategy, …)
  'io.k8s.api.apps.v1.DeploymentSpec': {
    properties: { replicas: NON_NEGATIVE, minReadySeconds: NON_NEGATIVE, revisionHistoryLimit: NON_NEGATIVE, progressDeadlineSeconds: { minimum: 1 } },
    keywords: { k8sWorkloadSpec: true },
  },
  'io.k8s.api.apps.v1.DeploymentStrategy': { properties: { type: { enum: ['Recreate', 'RollingUpdate'] } } },
  'io.k8s.api.apps.v1.StatefulSetSpec': {
    properties: { replicas: NON_NEGATIVE, podManagementPolicy: { enum: ['OrderedReady', 'Parallel'] } },
    keywords: { k8sWorkloadSpec: true },
  },
  'io.k8s.api.apps.v1.ReplicaSetSpec': { properties: { replicas: NON_NEGATIVE }, keywords: { k8sWorkloadSpec: true } },
  'io.k8s.api.apps.v1.DaemonSetSpec': { keywords: { k8sWorkloadSpec: true } },

  // --- batch/v1 (ValidateJobSpec, ValidateCronJobSpec)
  'io.k8s.api.batch.v1.JobSpec': {
    properties: { parallelism: NON_NEGATIVE, completions: NON_NEGATIVE, backoffLimit: NON_NEGATIVE, activeDeadlineSeconds: NON_NEGATIVE, ttlSecondsAfterFinished: NON_NEGATIVE },
    keywords: { k8sJobSpec: true },
  },
  'io.k8s.api.batch.v1.CronJobSpec': { properties: { concurrencyPolicy: { enum: ['Allow', 'Forbid', 'Replace'] } } },

  // --- networking.k8s.io/v1 (validateIngressSpec, validateHTTPIngressPath, ValidateNetworkPolicySpec)
  'io.k8s.api.networking.v1.IngressSpec': { keywords: { k8sIngressSpec: true } },
  'io.k8s.api.networking.v1.IngressRule': { properties: { host: { format: 'k8s-ingress-host' } } },
  'io.k8s.api.networking.v1.IngressTLS': { properties: { hosts: { items: { format: 'k8s-tls-host' } }, secretName: { format: 'k8s-dns1123-subdomain' } } },
  'io.k8s.api.networking.v1.HTTPIngressPath': {
    properties: { pathType: { enum: ['Exact', 'ImplementationSpecific', 'Prefix'] } },
    keywords: { k8sIngressPath: true },
  },
  'io.k8s.api.networking.v1.IngressBackend': { keywords: { k8sIngressBackend: true } },
  'io.k8s.api.networking.v1.IngressServiceBackend': { properties: { name: LABEL } },
  'io.k8s.api.networking.v1.ServiceBackendPort': { properties: { number: { k8sPortNumber: { allowZero: true } }, name: { format: 'k8s-port-name' } } },
  'io.k8s.api.networking.v1.NetworkPolicySpec': { properties: { policyTypes: { items: { enum: ['Egress', 'Ingress'] } } } },
  'io.k8s.api.networking.v1.NetworkPolicyPort': { properties: { protocol: PROTOCOL, port: { k8sPortOrName: true }, endPort: PORT } },

  // --- rbac.authorization.k8s.io/v1
  'io.k8s.api.rbac.v1.Role': { keywords: { k8sRbacRules: { namespaced: true } } },
  'io.k8s.api.rbac.v1.ClusterRole': { keywords: { k8sRbacRules: { namespaced: false } } },
  'io.k8s.api.rbac.v1.RoleBinding': { keywords: { k8sRoleBinding: { cluster: false } } },
  'io.k8s.api.rbac.v1.ClusterRoleBinding': { keywords: { k8sRoleBinding: { cluster: true } } },

  // --- admissionregistration.k8s.io/v1 (ValidateValidatingWebhookConfiguration, …)
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook': {
    properties: {
      failurePolicy: { enum: ['Fail', 'Ignore'] },
      matchPolicy: { enum: ['Equivalent', 'Exact'] },
      sideEffects: { enum: ['None', 'NoneOnDryRun'] },
      timeoutSeconds: { minimum: 1, maximum: 30 },
    },
  },
  'io.k8s.api.admissionregistration.v1.MutatingWebhook': {
    properties: {
      failurePolicy: { enum: ['Fail', 'Ignore'] },
      matchPolicy: { enum: ['Equivalent', 'Exact'] },
      sideEffects: { enum: ['None', 'NoneOnDryRun'] },
      reinvocationPolicy: { enum: ['IfNeeded', 'Never'] },
      timeoutSeconds: { minimum: 1, maximum: 30 },
    },
  },
  'io.k8s.api.admissionregistration.v1.RuleWithOperations': { properties: { operations: { items: { enum: ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'] } } } },
};

/** Rules for CRD schemas: `group/version/Kind` → (property path → keywords added there). */
export const CRD_RULES: Record<string, { path: string[]; keywords: Record<string, unknown> }[]> = {
  'kubevirt.io/v1/VirtualMachineInstance': [{ path: ['spec'], keywords: { kubevirtVmiSpec: true } }],
  'kubevirt.io/v1/VirtualMachine': [
    { path: ['spec', 'template', 'spec'], keywords: { kubevirtVmiSpec: true } },
    { path: ['spec', 'template', 'metadata'], keywords: { k8sObjectMeta: true } },
  ],
};

/** Messages for the formats ajv-formats provides, as the rules above use them. */
export const FORMAT_MESSAGES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(FORMATS).map(([k, v]) => [k, v.message])),
  byte: 'must be base64-encoded',
  'date-time': 'must be an RFC 3339 date-time (such as 2024-01-31T12:00:00Z)',
  int32: 'must be a 32-bit integer',
  int64: 'must be a 64-bit integer',
};
