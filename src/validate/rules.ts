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
 */
import type { Ajv, ErrorObject, SchemaValidateFunction } from 'ajv';
import { Quantity } from '../api/quantity.ts';
import { QUANTITY_PATTERN } from '../api/schema-validator.ts';
import { isDns1123Label, isDns1123Subdomain, isHostName, isLabelValue, isPathSegmentName, isPortName, isQualifiedName } from '../api/k8s-names.ts';

// --- k8s.io/apimachinery/pkg/util/validation (names are in src/api/k8s-names.ts) ---------------

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

type Push = (segments: readonly (string | number)[], message: string) => void;
type Check = (data: unknown, schema: unknown, push: Push) => void;

function escape(seg: string | number): string {
  return String(seg).replace(/~/g, '~0').replace(/\//g, '~1');
}

function keyword(ajv: Ajv, name: string, check: Check): void {
  const validate: SchemaValidateFunction = (schema, data, _parent, cxt) => {
    const errors: Partial<ErrorObject>[] = [];
    const base = cxt?.instancePath ?? '';
    check(data, schema, (segments, message) =>
      errors.push({ keyword: name, instancePath: base + segments.map((s) => `/${escape(s)}`).join(''), params: {}, message }),
    );
    validate.errors = errors;
    return errors.length === 0;
  };
  ajv.addKeyword({ keyword: name, validate, errors: true });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function quantity(v: unknown): Quantity | undefined {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  try {
    return Quantity.parse(v);
  } catch {
    return undefined;
  }
}

function show(v: unknown): string {
  return JSON.stringify(v) ?? String(v);
}

/** Go's `resource.ParseQuantity` accepts it: the API server's Quantity unmarshalling. */
export function isResourceQuantity(v: unknown): boolean {
  return quantity(v) !== undefined;
}

/** A label selector's requirements, as `metav1.LabelSelectorAsSelector` builds them. */
function selectorMatches(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(isObject(selector.matchLabels) ? selector.matchLabels : {})) if (labels[k] !== v) return false;
  for (const e of asArray(selector.matchExpressions)) {
    if (!isObject(e) || typeof e.key !== 'string') continue;
    const has = Object.hasOwn(labels, e.key);
    const values = asArray(e.values);
    if (e.operator === 'In' && !(has && values.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

function selectorIsEmpty(selector: Record<string, unknown>): boolean {
  return Object.keys(isObject(selector.matchLabels) ? selector.matchLabels : {}).length === 0 && asArray(selector.matchExpressions).length === 0;
}

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

/** Registers every format and keyword the rules (and the schema conversions) use. */
export function registerRules(ajv: Ajv): void {
  for (const [name, f] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: f.validate });

  // Built-in `resource.Quantity` (a string or a JSON number, parsed like Go does).
  keyword(ajv, 'k8sResourceQuantity', (data, _s, push) => {
    if (!isResourceQuantity(data)) push([], `${show(data)} is not a valid quantity (such as 500m, 2, 4Gi, 1e3)`);
  });
  // CRD `x-kubernetes-int-or-string` with the quantity pattern (as in src/api/schema-validator.ts).
  keyword(ajv, 'k8sQuantity', (data, _s, push) => {
    const ok = (typeof data === 'number' && Number.isInteger(data)) || (typeof data === 'string' && QUANTITY_PATTERN.test(data));
    if (!ok) push([], `${show(data)} is not a valid quantity (an integer or a string such as 500m, 2, 4Gi)`);
  });
  // `intstr.IntOrString`: an integer or a string; `'int32'` for the built-in type (CRDs'
  // `x-kubernetes-int-or-string` takes any integer).
  keyword(ajv, 'k8sIntOrString', (data, schema, push) => {
    const int32 = schema === 'int32';
    const ok = (typeof data === 'number' && Number.isInteger(data) && (!int32 || Math.abs(data) < 2 ** 31)) || typeof data === 'string';
    if (!ok) push([], `${show(data)} must be an integer${int32 ? ' (int32)' : ''} or a string`);
  });
  // validatePortNumOrName; `{ allowZero: true }` where defaulting replaces 0/"" (Service targetPort).
  keyword(ajv, 'k8sPortOrName', (data, schema, push) => {
    const allowZero = isObject(schema) && schema.allowZero === true;
    if (allowZero && (data === 0 || data === '')) return;
    if (typeof data === 'number') {
      if (!Number.isInteger(data) || data < 1 || data > 65535) push([], `${show(data)}: must be between 1 and 65535, inclusive`);
    } else if (typeof data === 'string') {
      if (!isPortName(data)) push([], `${show(data)}: ${FORMATS['k8s-port-name'].message}`);
    }
  });
  // IsValidPortNum.
  keyword(ajv, 'k8sPortNumber', (data, schema, push) => {
    if (typeof data !== 'number') return;
    if (isObject(schema) && schema.allowZero === true && data === 0) return;
    if (!Number.isInteger(data) || data < 1 || data > 65535) push([], `${show(data)}: must be between 1 and 65535, inclusive`);
  });

  // ValidateObjectMeta: ValidateLabels, ValidateAnnotations (keys, values, 256 KiB in total).
  keyword(ajv, 'k8sObjectMeta', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.labels)) {
      for (const [k, v] of Object.entries(data.labels)) {
        if (!isQualifiedName(k)) push(['labels', k], `invalid label key ${show(k)}: must be a qualified name ([prefix/]name, name at most 63 alphanumeric characters, '-', '_' or '.')`);
        if (typeof v === 'string' && !isLabelValue(v)) {
          push(['labels', k], `invalid label value ${show(v)}: at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`);
        }
      }
    }
    if (isObject(data.annotations)) {
      let size = 0;
      for (const [k, v] of Object.entries(data.annotations)) {
        if (!isQualifiedName(k.toLowerCase())) push(['annotations', k], `invalid annotation key ${show(k)}: must be a qualified name`);
        size += k.length + (typeof v === 'string' ? v.length : 0);
      }
      if (size > 256 * 1024) push(['annotations'], `too long: must have at most 262144 bytes (has ${size})`);
    }
  });

  // ValidateLabelSelector (meta/v1).
  keyword(ajv, 'k8sLabelSelector', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.matchLabels)) {
      for (const [k, v] of Object.entries(data.matchLabels)) {
        if (!isQualifiedName(k)) push(['matchLabels', k], `invalid label key ${show(k)}: must be a qualified name`);
        if (typeof v === 'string' && !isLabelValue(v)) push(['matchLabels', k], `invalid label value ${show(v)}`);
      }
    }
    asArray(data.matchExpressions).forEach((e, i) => {
      if (!isObject(e)) return;
      const values = asArray(e.values);
      if (typeof e.key === 'string' && !isQualifiedName(e.key)) push(['matchExpressions', i, 'key'], `invalid label key ${show(e.key)}`);
      if (e.operator === 'In' || e.operator === 'NotIn') {
        if (values.length === 0) push(['matchExpressions', i, 'values'], 'must be specified when `operator` is \'In\' or \'NotIn\'');
      } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
        if (values.length > 0) push(['matchExpressions', i, 'values'], 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'');
      } else if (typeof e.operator === 'string') {
        push(['matchExpressions', i, 'operator'], `unsupported value ${show(e.operator)}: must be one of "DoesNotExist", "Exists", "In", "NotIn"`);
      }
    });
  });

  // validateResourceRequirements / ValidateResourceQuantityValue (containers) and
  // ValidatePersistentVolumeClaimSpec's resources (`{ volume: true }`: storage only matters).
  keyword(ajv, 'k8sResourceRequirements', (data, schema, push) => resourceRequirementIssues(data, isObject(schema) && schema.volume === true, push));

  // ValidateResourceQuotaSpec: hard amounts are non-negative.
  keyword(ajv, 'k8sNonNegativeQuantities', (data, _s, push) => negativeQuantityIssues(data, push));

  // ValidateLimitRange: min ≤ defaultRequest ≤ default ≤ max, per resource; no defaults for Pods.
  keyword(ajv, 'k8sLimitRangeItem', (data, _s, push) => {
    if (!isObject(data)) return;
    const part = (k: string) => (isObject(data[k]) ? (data[k] as Record<string, unknown>) : {});
    if (data.type === 'Pod') {
      for (const k of ['default', 'defaultRequest']) if (Object.keys(part(k)).length) push([k], "may not be specified when `type` is 'Pod'");
    }
    // [lower, upper, the field reported, message]
    const order = [
      ['min', 'max', 'min', 'min value %1 is greater than max value %2'],
      ['min', 'defaultRequest', 'defaultRequest', 'min value %1 is greater than default request value %2'],
      ['min', 'default', 'default', 'min value %1 is greater than default value %2'],
      ['defaultRequest', 'max', 'defaultRequest', 'default request value %1 is greater than max value %2'],
      ['default', 'max', 'default', 'default value %1 is greater than max value %2'],
      ['defaultRequest', 'default', 'defaultRequest', 'default request value %1 is greater than default limit value %2'],
    ] as const;
    for (const [lo, hi, at, text] of order) {
      for (const [name, v] of Object.entries(part(lo))) {
        const a = quantity(v);
        const b = quantity(part(hi)[name]);
        if (a && b && a.cmp(b) > 0) push([at, name], text.replace('%1', a.toString()).replace('%2', b.toString()));
      }
    }
    for (const k of ['min', 'max', 'default', 'defaultRequest']) {
      for (const [name, v] of Object.entries(part(k))) {
        const q = quantity(v);
        if (q && q.sign() < 0) push([k, name], `${show(v)}: must be greater than or equal to 0`);
      }
    }
  });

  // ValidatePodSpec: containers required, unique names (containers and init containers share
  // one namespace), unique volume names, every volumeMount names a volume.
  keyword(ajv, 'k8sPodSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const volumes = new Set<string>();
    asArray(data.volumes).forEach((v, i) => {
      if (!isObject(v) || typeof v.name !== 'string') return;
      if (volumes.has(v.name)) push(['volumes', i, 'name'], `duplicate volume name ${show(v.name)}`);
      volumes.add(v.name);
    });
    if (asArray(data.containers).length === 0) push(['containers'], 'required value is missing: a pod needs at least one container');
    const names = new Set<string>();
    for (const list of ['initContainers', 'containers'] as const) {
      asArray(data[list]).forEach((c, i) => {
        if (!isObject(c)) return;
        if (typeof c.name === 'string') {
          if (names.has(c.name)) push([list, i, 'name'], `duplicate container name ${show(c.name)}`);
          names.add(c.name);
        }
        asArray(c.volumeMounts).forEach((m, j) => {
          if (isObject(m) && typeof m.name === 'string' && !volumes.has(m.name)) push([list, i, 'volumeMounts', j, 'name'], `volume ${show(m.name)} not found among spec.volumes`);
        });
      });
    }
  });

  // apps ValidateDeploymentSpec / ValidateReplicaSetSpec / ValidateStatefulSetSpec / ValidateDaemonSetSpec:
  // a non-empty selector that matches the template's labels; template restartPolicy Always.
  keyword(ajv, 'k8sWorkloadSpec', (data, _s, push) => {
    if (!isObject(data) || !isObject(data.selector)) return;
    if (selectorIsEmpty(data.selector)) {
      push(['selector'], 'empty selector is invalid for this workload');
      return;
    }
    const template = isObject(data.template) ? data.template : {};
    const meta = isObject(template.metadata) ? template.metadata : {};
    const labels = isObject(meta.labels) ? meta.labels : {};
    if (!selectorMatches(data.selector, labels)) push(['template', 'metadata', 'labels'], '`selector` does not match template `labels`');
    const spec = isObject(template.spec) ? template.spec : {};
    if (spec.restartPolicy !== undefined && spec.restartPolicy !== 'Always') push(['template', 'spec', 'restartPolicy'], `unsupported value ${show(spec.restartPolicy)}: must be "Always"`);
  });

  // batch ValidateJobSpec: the template's restartPolicy must be OnFailure or Never.
  keyword(ajv, 'k8sJobSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const template = isObject(data.template) ? data.template : {};
    const spec = isObject(template.spec) ? template.spec : {};
    if (spec.restartPolicy !== 'OnFailure' && spec.restartPolicy !== 'Never') {
      push(['template', 'spec', 'restartPolicy'], `${spec.restartPolicy === undefined ? 'required value is missing' : `unsupported value ${show(spec.restartPolicy)}`}: must be "OnFailure" or "Never"`);
    }
  });

  // core validateService: ports required (but for ExternalName and headless services), every port
  // named when there are several, names and port/protocol pairs unique.
  keyword(ajv, 'k8sServiceSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const ports = asArray(data.ports);
    const headless = data.clusterIP === 'None';
    if (ports.length === 0 && data.type !== 'ExternalName' && !headless) push(['ports'], 'required value is missing');
    const names = new Set<string>();
    const pairs = new Set<string>();
    ports.forEach((p, i) => {
      if (!isObject(p)) return;
      if (ports.length > 1 && (typeof p.name !== 'string' || p.name === '')) push(['ports', i, 'name'], 'required value is missing: every port of a multi-port service needs a name');
      if (typeof p.name === 'string' && p.name !== '') {
        if (names.has(p.name)) push(['ports', i, 'name'], `duplicate port name ${show(p.name)}`);
        names.add(p.name);
      }
      const pair = `${String(p.port)}/${String(p.protocol ?? 'TCP')}`;
      if (pairs.has(pair)) push(['ports', i], `duplicate port ${pair}`);
      pairs.add(pair);
    });
  });

  // networking validateIngressSpec / validateHTTPIngressPath / validateIngressBackend.
  keyword(ajv, 'k8sIngressSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    if (asArray(data.rules).length === 0 && !isObject(data.defaultBackend)) push(['rules'], 'either `defaultBackend` or `rules` must be specified');
  });
  keyword(ajv, 'k8sIngressPath', (data, _s, push) => {
    if (!isObject(data)) return;
    if ((data.pathType === 'Exact' || data.pathType === 'Prefix') && !(typeof data.path === 'string' && data.path.startsWith('/'))) {
      push(['path'], `${show(data.path)}: must be an absolute path when pathType is ${data.pathType}`);
    }
  });
  keyword(ajv, 'k8sIngressBackend', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.service) === isObject(data.resource)) push([], 'exactly one of `service` or `resource` must be specified');
    const port = isObject(data.service) && isObject(data.service.port) ? data.service.port : undefined;
    if (port) {
      const hasName = typeof port.name === 'string' && port.name !== '';
      const hasNumber = port.number !== undefined && port.number !== 0;
      if (hasName && hasNumber) push(['service', 'port'], 'cannot set both port name & port number');
      if (!hasName && !hasNumber) push(['service', 'port'], 'port name or number is required');
    }
  });

  // rbac ValidateRole / ValidateClusterRole → ValidatePolicyRule.
  keyword(ajv, 'k8sRbacRules', (data, schema, push) => {
    if (!isObject(data)) return;
    const namespaced = isObject(schema) && schema.namespaced === true;
    asArray(data.rules).forEach((r, i) => {
      if (!isObject(r)) return;
      if (asArray(r.verbs).length === 0) push(['rules', i, 'verbs'], 'required value is missing: verbs must contain at least one value');
      if (asArray(r.nonResourceURLs).length > 0) {
        if (namespaced) push(['rules', i, 'nonResourceURLs'], 'namespaced rules cannot apply to non-resource URLs');
        if (asArray(r.apiGroups).length || asArray(r.resources).length || asArray(r.resourceNames).length) {
          push(['rules', i, 'nonResourceURLs'], 'rules cannot apply to both regular resources and non-resource URLs');
        }
        return;
      }
      if (asArray(r.apiGroups).length === 0) push(['rules', i, 'apiGroups'], 'required value is missing: resource rules must supply at least one api group');
      if (asArray(r.resources).length === 0) push(['rules', i, 'resources'], 'required value is missing: resource rules must supply at least one resource');
    });
  });

  // rbac ValidateRoleBinding / ValidateClusterRoleBinding / ValidateRoleBindingSubject (after
  // SetDefaults_Subject, which fills apiGroup for User and Group).
  keyword(ajv, 'k8sRoleBinding', (data, schema, push) => {
    if (!isObject(data)) return;
    const cluster = isObject(schema) && schema.cluster === true;
    const ref = isObject(data.roleRef) ? data.roleRef : undefined;
    if (ref) {
      if (ref.apiGroup !== undefined && ref.apiGroup !== 'rbac.authorization.k8s.io') push(['roleRef', 'apiGroup'], `unsupported value ${show(ref.apiGroup)}: must be "rbac.authorization.k8s.io"`);
      const kinds = cluster ? ['ClusterRole'] : ['ClusterRole', 'Role'];
      if (typeof ref.kind === 'string' && !kinds.includes(ref.kind)) push(['roleRef', 'kind'], `unsupported value ${show(ref.kind)}: must be one of ${kinds.map(show).join(', ')}`);
      if (typeof ref.name === 'string' && (ref.name === '' || !isPathSegmentName(ref.name))) push(['roleRef', 'name'], `${show(ref.name)}: ${NAME_MESSAGES.pathSegment}`);
    }
    asArray(data.subjects).forEach((s, i) => {
      if (!isObject(s)) return;
      const group = s.apiGroup ?? '';
      if (s.kind === 'ServiceAccount') {
        if (typeof s.name === 'string' && !isDns1123Subdomain(s.name)) push(['subjects', i, 'name'], `${show(s.name)}: ${NAME_MESSAGES.dns1123Subdomain}`);
        if (group !== '') push(['subjects', i, 'apiGroup'], `unsupported value ${show(group)}: must be ""`);
        if (cluster && (typeof s.namespace !== 'string' || s.namespace === '')) push(['subjects', i, 'namespace'], 'required value is missing');
      } else if (s.kind === 'User' || s.kind === 'Group') {
        if (group !== '' && group !== 'rbac.authorization.k8s.io') push(['subjects', i, 'apiGroup'], `unsupported value ${show(group)}: must be "rbac.authorization.k8s.io"`);
      } else if (typeof s.kind === 'string') {
        push(['subjects', i, 'kind'], `unsupported value ${show(s.kind)}: must be one of "Group", "ServiceAccount", "User"`);
      }
    });
  });

  // KubeVirt virt-api (v1.9, the version of the vendored CRDs), VMICreateAdmitter:
  // ValidateVirtualMachineInstanceSpec (also run on a VirtualMachine's template), plus
  // ValidateVirtualMachineInstanceMandatoryFields and validateVirtualMachineInstanceSpecVolumeDisks,
  // which run when the VMI is created: on a VirtualMachine they fail when it starts. Checks that
  // depend on the cluster's KubeVirt configuration (feature gates, rollout strategy) are left out.
  keyword(ajv, 'kubevirtVmiSpec', (data, _s, push) => {
    if (!isObject(data)) return;
    const domain = isObject(data.domain) ? data.domain : {};
    const resources = isObject(domain.resources) ? domain.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    const memory = isObject(domain.memory) ? domain.memory : {};
    const reqMem = quantity(requests.memory);
    const limMem = quantity(limits.memory);
    // validateMemoryRequestsNegativeOrNull, validateMemoryLimitsNegativeOrNull
    if (reqMem && reqMem.sign() < 0) push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()}: must be greater than or equal to 0`);
    else if (reqMem && reqMem.sign() > 0 && reqMem.cmp('1M') < 0) push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()}: must be greater than or equal to 1M`);
    if (limMem && limMem.sign() < 0) push(['domain', 'resources', 'limits', 'memory'], `${limMem.toString()}: must be greater than or equal to 0`);
    if (reqMem && limMem && limMem.sign() > 0 && reqMem.cmp(limMem) > 0) {
      push(['domain', 'resources', 'requests', 'memory'], `${reqMem.toString()} is greater than domain.resources.limits.memory ${limMem.toString()}`);
    }
    // validateCPURequestNotNegative, validateCPULimitNotNegative, validateCpuRequestDoesNotExceedLimit
    const reqCpu = quantity(requests.cpu);
    const limCpu = quantity(limits.cpu);
    if (reqCpu && reqCpu.sign() < 0) push(['domain', 'resources', 'requests', 'cpu'], `${reqCpu.toString()}: must be greater than or equal to 0`);
    if (limCpu && limCpu.sign() < 0) push(['domain', 'resources', 'limits', 'cpu'], `${limCpu.toString()}: must be greater than or equal to 0`);
    if (reqCpu && limCpu && limCpu.sign() > 0 && reqCpu.cmp(limCpu) > 0) {
      push(['domain', 'resources', 'requests', 'cpu'], `${reqCpu.toString()} is greater than domain.resources.limits.cpu ${limCpu.toString()}`);
    }
    // ValidateVirtualMachineInstanceMandatoryFields
    if ((!reqMem || reqMem.isZero()) && memory.guest === undefined && memory.hugepages === undefined) {
      push(['domain'], "no memory requested, at least one of 'domain.memory.guest', 'domain.memory.hugepages.size' or 'domain.resources.requests.memory' must be set");
    }
    // validateBootOrder: every disk (but an empty CD-ROM) has a volume;
    // validateVirtualMachineInstanceSpecVolumeDisks: every volume (but a memory dump) has a disk or filesystem.
    const devices = isObject(domain.devices) ? domain.devices : {};
    const volumes = asArray(data.volumes);
    const volumeNames = new Set(volumes.flatMap((v) => (isObject(v) && typeof v.name === 'string' ? [v.name] : [])));
    asArray(devices.disks).forEach((d, i) => {
      if (isObject(d) && typeof d.name === 'string' && !volumeNames.has(d.name) && d.cdrom === undefined) {
        push(['domain', 'devices', 'disks', i, 'name'], `disk ${show(d.name)} not found among volumes`);
      }
    });
    const diskNames = new Set(
      [...asArray(devices.disks), ...asArray(devices.filesystems)].flatMap((d) => (isObject(d) && typeof d.name === 'string' ? [d.name] : [])),
    );
    volumes.forEach((v, i) => {
      if (isObject(v) && typeof v.name === 'string' && v.memoryDump === undefined && !diskNames.has(v.name)) {
        push(['volumes', i, 'name'], `volume ${show(v.name)} is not used by any disk or filesystem`);
      }
    });
    // network admitter: every interface names a network.
    const networks = new Set(asArray(data.networks).flatMap((n) => (isObject(n) && typeof n.name === 'string' ? [n.name] : [])));
    asArray(devices.interfaces).forEach((n, i) => {
      if (isObject(n) && typeof n.name === 'string' && !networks.has(n.name)) push(['domain', 'devices', 'interfaces', i, 'name'], `interface ${show(n.name)} not found among networks`);
    });
    // validateProbe: exactly one handler.
    for (const probe of ['readinessProbe', 'livenessProbe'] as const) {
      const p = data[probe];
      if (!isObject(p)) continue;
      const handlers = ['httpGet', 'tcpSocket', 'exec', 'guestAgentPing'].filter((h) => p[h] !== undefined).length;
      if (handlers === 0) push([probe], `either ${probe}.tcpSocket, ${probe}.exec or ${probe}.httpGet must be set if a ${probe} is specified`);
      if (handlers > 1) push([probe], 'must have exactly one probe type set');
    }
  });
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
