import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { readInputFile } from '../inputs/input-file.ts';
import { expandAliases, MAX_ALIAS_VALUES } from '../inputs/yaml-aliases.ts';
import type { Problem } from '../inputs/problems.ts';
import { Quantity } from '../inputs/quantity.ts';
import { QUANTITY_PATTERN } from '../inputs/schema-validator.ts';
import { isDnsName, isLabelValue, isQualifiedName as isLabelKey } from '../inputs/k8s-names.ts';
import { nearest } from './suggest.ts';
import { expandIpPool, poolEntryRange } from './ip-pool.ts';
import { CONFIG_KEYS, envVarName, MIN_SEED_LENGTH, type ConfigKeyDef, type ValueCheck } from './keys.ts';
import type { ApiLevel } from '../inputs/api-level.ts';

export interface LabelSelector {
  key: string;
  value: string;
}

/** The validated configuration every part of the composer reads. */
export interface ComposerConfig {
  /** Bytes. */
  inputMaxFileSize: number;
  websiteBaseUrl: string;
  instancesAuthUrl: string;
  namespaceWhitelist: Record<string, string>;
  containerEnvSidecarsTag: string;
  containerEnvXVncImg: string;
  containerEnvWebsockifyImg: string;
  containerEnvContentDownloaderImg: string;
  containerEnvContentUploaderImg: string;
  containerEnvInstmetricsServerEndpoint: string;
  vmRegistry: string;
  vmRegistrySecret: string;
  containerExportImg: string;
  containerKanikoImg: string;
  authMode: 'shared' | 'per-instance';
  exposition: 'ingress' | 'gateway' | 'both';
  gatewayRef: string;
  platformGatewayAuth: boolean;
  stoppedEphemeral: 'keep-running' | 'release';
  /** Entries as given (src/config/ip-pool.ts expands them). */
  publicExposureIpPool: string[];
  publicExposureCommonAnnotations: Record<string, string>;
  publicExposureCommonLabels: Record<string, string>;
  publicExposureLoadbalancerIpsKey: string;
  apiLevel: ApiLevel;
  oauth2ProxyImage: string;
  oidcIssuerUrl: string;
  oidcClientId: string;
  oidcClientSecret: string;
  cookieSecretSeed: string;
  targetLabel: LabelSelector;
  mydrivePvcsSize: string;
  mydrivePvcsStorageClassName: string;
  sharedVolumeStorageClass: string;
  volumeProvisioningImg: string;
  mirrorStorageClass: string;
  mydrivePvcsNamespace: string;
  mydriveNfsServerName: string;
  mydriveNfsPathTemplate: string;
  sandboxClusterRole: string;
  sandboxPodSecurity: 'privileged' | 'baseline' | 'restricted';
  baseWorkspaces: string[];
  capCpu: string;
  capMemory: string;
  capInstances: number;
  keycloakUrl: string;
  keycloakLoginRealm: string;
  keycloakTargetRealm: string;
  keycloakTargetClient: string;
  keycloakUser: string;
  keycloakPassword: string;
  gitopsRepoUrl: string;
  gitopsRevision: string;
  gitopsPath: string;
  argocdNamespace: string;
  argocdProject: string;
  gitopsMaxObjectsPerApp: number;
  gitopsSecretStore: string;
  gitopsSecretMode: 'existing' | 'external-secret' | 'sealed-secret';
  platformNamespace: string;
  platformImage: string;
  platformShards: string[];
  platformInstanceAutomation: string[];
  platformPrometheusUrl: string;
  platformMailSecret: string;
  platformMailTemplates: string;
  platformControllerReplicas: number;
  platformControllerCpu: string;
  platformControllerMemory: string;
  platformLabelWriters: string[];
  platformInstallCrds: boolean;
  platformServiceMonitor: boolean;
  platformWebhookCertificate: string;
  platformWebhookCaBundle: string;
  platformBastion: boolean;
  platformBastionSshdImage: string;
  platformImageListRegistryUrl: string;
  platformImageListName: string;
  platformImageListAdvertisedRegistryName: string;
  platformImageListUpdateInterval: number;
}

export interface ConfigSources {
  /** Path of a YAML config file (lowest precedence after defaults). */
  file?: string;
  /** Environment (CROWNLABS_* variables); defaults to none so that tests stay hermetic. */
  env?: Record<string, string | undefined>;
  /** Values given as flags, keyed by config key (highest precedence). */
  flags?: Partial<Record<string, unknown>>;
}

/** The defaults alone: what an empty config file, environment and command line give. */
export function defaultConfig(): ComposerConfig {
  const out: Record<string, unknown> = {};
  for (const def of CONFIG_KEYS as readonly ConfigKeyDef[]) {
    const { value } = parseValue(def, def.default);
    out[def.key] = value;
  }
  return out as unknown as ComposerConfig;
}

/** The config file is small; a FIFO, device or huge file given as --config is refused. */
const CONFIG_MAX_BYTES = 2 ** 20;

/** Merges defaults < file < environment < flags, validating every value. */
export function loadConfig(sources: ConfigSources = {}): { config: ComposerConfig; problems: Problem[] } {
  const problems: Problem[] = [];
  const config = defaultConfig() as unknown as Record<string, unknown>;
  const defs = CONFIG_KEYS as readonly ConfigKeyDef[];
  const set = (def: ConfigKeyDef, raw: unknown, where: Omit<Problem, 'severity' | 'message'>) => {
    const { value, error } = parseValue(def, raw);
    if (error) problems.push({ severity: 'error', ...where, message: error });
    else config[def.key] = value;
  };
  const envOnly = (def: ConfigKeyDef, where: Omit<Problem, 'severity' | 'message'>) =>
    problems.push({ severity: 'error', ...where, message: `is a secret read only from the environment: set ${envVarName(def.key)} instead` });
  if (sources.file) {
    const file = sources.file;
    const read = readInputFile(file, CONFIG_MAX_BYTES, 'the config file limit');
    const parsed = read.ok ? parseConfigText(read.text, file) : { problems: [{ severity: 'error' as const, file, ...(read.line ? { line: read.line } : {}), message: `cannot read config: ${read.message}` }] };
    problems.push(...parsed.problems);
    const fileValues = parsed.value;
    if (fileValues !== undefined && fileValues !== null) {
      if (typeof fileValues !== 'object' || Array.isArray(fileValues)) {
        problems.push({ severity: 'error', file, message: 'the config file must be a mapping of keys to values' });
      } else {
        for (const [key, raw] of Object.entries(fileValues as Record<string, unknown>)) {
          const def = defs.find((d) => d.key === key);
          const where = { file, ...parsed.lineOf?.(key), field: key };
          if (!def) {
            const near = nearest(key, defs, (d) => [d.key, d.flag, envVarName(d.key)]);
            problems.push({ severity: 'error', ...where, message: near ? `unknown config key: did you mean ${near.key}?` : `unknown config key (see 'crownlabs help config' for the keys)` });
            continue;
          }
          if (def.envOnly) envOnly(def, where);
          else set(def, raw, where);
        }
      }
    }
  }
  for (const def of defs) {
    const raw = sources.env?.[envVarName(def.key)];
    if (raw !== undefined) set(def, raw, { file: `environment ${envVarName(def.key)}`, field: def.key });
  }
  for (const def of defs) {
    const raw = sources.flags?.[def.key];
    if (raw === undefined) continue;
    if (def.envOnly) envOnly(def, { file: 'flags', field: def.key });
    else set(def, raw, { file: `flag ${def.flag}`, field: def.key });
  }
  const gateway = gatewayRefProblem(config as unknown as ComposerConfig);
  if (gateway) problems.push(gateway);
  const pool = expandIpPool((config as unknown as ComposerConfig).publicExposureIpPool ?? []);
  if ('error' in pool && !problems.some((p) => p.field === 'publicExposureIpPool')) {
    problems.push({ severity: 'error', field: 'publicExposureIpPool', message: `publicExposureIpPool ${pool.error}` });
  }
  return { config: config as unknown as ComposerConfig, problems };
}

/**
 * The config file's YAML: one document; syntax errors (duplicate keys among them) and alias
 * problems are reported at their line, and aliases are capped as in input files.
 */
function parseConfigText(text: string, file: string): { value?: unknown; problems: Problem[]; lineOf?: (key: string) => { line: number; column: number } | undefined } {
  const lineCounter = new LineCounter();
  const at = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  const problem = (offset: number | undefined, message: string): Problem => ({ severity: 'error', file, ...at(offset), message: `cannot read config: ${message}` });
  const fail = (offset: number | undefined, message: string) => ({ problems: [problem(offset, message)] });
  try {
    const doc = parseDocument(text, { lineCounter, prettyErrors: false });
    if (doc.errors.length > 0) return { problems: doc.errors.map((e) => problem(e.pos[0], firstLine(e.message))) };
    const issue = expandAliases(doc, { remaining: MAX_ALIAS_VALUES });
    if (issue) return fail(issue.offset, issue.message);
    const value = doc.toJS({ maxAliasCount: -1 }) as unknown;
    const lineOf = (key: string) => {
      if (!isMap(doc.contents)) return undefined;
      const pair = doc.contents.items.find((p) => isScalar(p.key) && String(p.key.value) === key);
      const offset = isScalar(pair?.key) ? pair.key.range?.[0] : undefined;
      return offset === undefined ? undefined : (at(offset) as { line: number; column: number });
    };
    return { value, problems: [], lineOf };
  } catch (err) {
    return fail(undefined, firstLine((err as Error).message));
  }
}

/** Routes attach to a Gateway: without one named they would be refused by the API server. */
function gatewayRefProblem(config: Pick<ComposerConfig, 'exposition' | 'gatewayRef'>): Problem | undefined {
  if (config.exposition === 'ingress' || config.gatewayRef) return undefined;
  return {
    severity: 'error',
    file: 'configuration',
    field: 'gatewayRef',
    message: `exposition "${config.exposition}" attaches every HTTPRoute to a Gateway: set gatewayRef (${envVarName('gatewayRef')}, --gateway-api-refs-values) to its <namespace>/<name>`,
  };
}

/**
 * The problem of a configuration whose per-instance oauth2-proxies would get cookie secrets anyone
 * could compute: their seed is the only secret input (Instance UIDs and names are in the rendered
 * paths). Sinks that write Secret values (synth, the controller) refuse to render without it.
 */
export function cookieSecretSeedProblem(config: Pick<ComposerConfig, 'authMode' | 'cookieSecretSeed'>): Problem | undefined {
  if (config.authMode !== 'per-instance' || config.cookieSecretSeed) return undefined;
  return {
    severity: 'error',
    file: `environment ${envVarName('cookieSecretSeed')}`,
    field: 'cookieSecretSeed',
    message:
      `authMode "per-instance" derives every oauth2-proxy cookie secret from a secret seed, and none is set: set ${envVarName('cookieSecretSeed')} ` +
      `to at least ${MIN_SEED_LENGTH} random characters (e.g. \`openssl rand -hex 32\`); in the cluster the controller reads it from the Secret crownlabs-composer-secrets, key cookieSecretSeed`,
  };
}

// Names and references as the API server and the image tools read them.
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const REGISTRY_HOST = String.raw`(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::\d{1,5})?`;
const PATH_COMPONENT = String.raw`[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*`;
const TAG = String.raw`[\w][\w.-]{0,127}`;
const DIGEST = String.raw`[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`;
const REPOSITORY_PATH = new RegExp(`^${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`);
const TAG_AND_DIGEST = new RegExp(`^(?::${TAG})?(?:@${DIGEST})?$`);
const IMAGE_TAG = new RegExp(`^${TAG}$`);
const REGISTRY = new RegExp(`^${REGISTRY_HOST}(?:/${PATH_COMPONENT})*$`);

/**
 * distribution/reference: `[host[:port]/]path[:tag][@digest]`; the first part is a host only
 * when it has a `.` or `:` or is `localhost` (else it is a lowercase path component).
 */
function isImage(s: string, withTag: boolean): boolean {
  // The tag or digest starts at the first `:` or `@` after the last `/`.
  const at = s.search(/[:@][^/]*$/);
  const name = at >= 0 ? s.slice(0, at) : s;
  const rest = s.slice(name.length);
  if (!withTag && rest !== '') return false;
  if (!TAG_AND_DIGEST.test(rest)) return false;
  const slash = name.indexOf('/');
  const first = slash >= 0 ? name.slice(0, slash) : '';
  const isHost = slash >= 0 && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (isHost && !new RegExp(`^${REGISTRY_HOST}$`).test(first)) return false;
  return REPOSITORY_PATH.test(isHost ? name.slice(slash + 1) : name);
}

function quantitySign(s: string): number | undefined {
  try {
    return Quantity.parse(s).sign();
  } catch {
    return undefined;
  }
}

function hostPort(s: string): boolean {
  const m = /^(.+?)(?::(\d{1,5}))?$/.exec(s);
  return !!m && (isDnsName(m[1]) || IPV4.test(m[1])) && (m[2] === undefined || (Number(m[2]) >= 1 && Number(m[2]) <= 65535));
}

function isUrl(s: string, schemes: readonly string[]): boolean {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  return schemes.includes(u.protocol) && u.hostname !== '' && !/\s/.test(s);
}

const show = (v: unknown) => JSON.stringify(v);
const DNS_NAME_TEXT = "a bare DNS name: lowercase letters, digits, '-' and '.', each part at most 63 characters, no scheme, path or port (e.g. crownlabs.polito.it)";

/**
 * Checks of parsed values, by the name a key's `check` gives; each returns an error or nothing.
 * An empty string passes where the key's default is empty (the documented "Empty: …" meaning).
 */
const VALUE_CHECKS: Record<ValueCheck, (value: unknown) => string | undefined> = {
  'secret-seed': (v) => (v === '' || (v as string).length >= MIN_SEED_LENGTH ? undefined : `must be at least ${MIN_SEED_LENGTH} characters (e.g. \`openssl rand -hex 32\`), or empty`),
  // Exam and Exercise instances get `exam.` / `exercise.` in front: that must still be a DNS name.
  'dns-name': (v) => (isDnsName(v as string, 253 - 'exercise.'.length) && !IPV4.test(v as string) ? undefined : `must be ${DNS_NAME_TEXT}, not ${show(v)}`),
  'dns-label': (v) => (isDnsName(v as string, 63) && !(v as string).includes('.') ? undefined : `must be a namespace name (a DNS label: at most 63 lowercase letters, digits and '-'), not ${show(v)}`),
  'object-name': (v) => (isDnsName(v as string) ? undefined : `must be a Kubernetes object name (a lowercase DNS subdomain of at most 253 characters), not ${show(v)}`),
  'rbac-name': (v) => (v !== '' && v !== '.' && v !== '..' && !/[/%]/.test(v as string) ? undefined : `must be a ClusterRole name (not empty, '.' or '..', no '/' or '%'), not ${show(v)}`),
  url: (v) => (isUrl(v as string, ['http:', 'https:']) ? undefined : `must be an http(s) URL with a host (e.g. https://auth.example.org/path), not ${show(v)}`),
  'git-url': (v) =>
    // file:///path: a repository on the repo server's own disk, which Argo CD reads too.
    isUrl(v as string, ['http:', 'https:', 'ssh:', 'git:']) || /^[\w.-]+@[\w.-]+:[^\s]+$/.test(v as string) || /^file:\/\/\/[^\s]+$/.test(v as string)
      ? undefined
      : `must be a git repository URL (https://, ssh://, git://, file:/// or user@host:path), not ${show(v)}`,
  'host-port': (v) => (hostPort(v as string) ? undefined : `must be host or host:port (no scheme or path), not ${show(v)}`),
  registry: (v) => (REGISTRY.test(v as string) && hostPort((v as string).split('/')[0]) ? undefined : `must be a registry host[:port], optionally with a path (e.g. registry.example.org/crownlabs), not ${show(v)}`),
  'nfs-server': (v) => (isDnsName(v as string) || IPV4.test(v as string) ? undefined : `must be a host name or an IPv4 address, not ${show(v)}`),
  image: (v) => (isImage(v as string, true) ? undefined : `must be an image reference ([registry/]repository[:tag][@digest], lowercase repository), not ${show(v)}`),
  'image-repository': (v) => (isImage(v as string, false) ? undefined : `must be an image repository without tag or digest ([registry/]repository; containerEnvSidecarsTag is appended), not ${show(v)}`),
  'image-tag': (v) => (IMAGE_TAG.test(v as string) ? undefined : `must be an image tag (letters, digits, '_', '.', '-', at most 128, not starting with '.' or '-'), not ${show(v)}`),
  'absolute-path': (v) => ((v as string).startsWith('/') && !/[\s]/.test(v as string) ? undefined : `must be an absolute path (starting with '/', no spaces), not ${show(v)}`),
  'mydrive-path-template': (v) => {
    const path = VALUE_CHECKS['absolute-path'](v);
    if (path) return path;
    // A placeholder the renderer does not know would end up in the NFS path literally.
    const unknown = (v as string).replace(/\{(tenant|pvc)\}/g, '').match(/\{[^{}]*\}?|\}/);
    if (!unknown) return undefined;
    return `has the unknown placeholder ${show(unknown[0])} in ${show(v)}: the known placeholders are {tenant} (the canonical tenant name) and {pvc} (the tenant's MyDrive PVC name)`;
  },
  'relative-path': (v) => {
    const s = v as string;
    return s !== '' && !s.startsWith('/') && !s.split('/').includes('..') && !/\s/.test(s) ? undefined : `must be a relative path inside the repository (no leading '/', no '..'), not ${show(v)}`;
  },
  'namespaced-name': (v) => {
    const [ns, name, ...rest] = (v as string).split('/');
    return rest.length === 0 && name !== undefined && isDnsName(ns, 63) && !ns.includes('.') && isDnsName(name) ? undefined : `must be <namespace>/<name>, not ${show(v)}`;
  },
  base64: (v) => (/^[A-Za-z0-9+/]+={0,2}$/.test(v as string) && (v as string).length % 4 === 0 ? undefined : 'must be base64 (a PEM bundle encoded with base64 -w0)'),
  'non-empty': (v) => (typeof v === 'string' && v.trim() !== '' && !/\s/.test(v) ? undefined : `must be a non-empty value without spaces, not ${show(v)}`),
  positive: (v) => {
    if (typeof v === 'number') return v > 0 ? undefined : `must be greater than 0, not ${v}`;
    return (quantitySign(v as string) ?? 0) > 0 ? undefined : `must be greater than zero, not ${show(v)}`;
  },
  // The namespace `workspace-<name>` must be a DNS label.
  'workspace-name': (v) => (isDnsName(`workspace-${v as string}`, 63) && !(v as string).includes('.') ? undefined : `has ${show(v)}: a workspace name here must make workspace-<name> a namespace name (lowercase letters, digits, '-', at most 53)`),
  'ip-pool': (v) => {
    const r = poolEntryRange(v as string);
    return 'error' in r ? `has ${r.error}: each entry is an IPv4 address, a range a-b or a CIDR` : undefined;
  },
  'annotation-key': (v) => (isLabelKey(v as string) ? undefined : `must be an annotation key ([prefix/]name), not ${show(v)}`),
  // `crownlabs-controller-<shard>` names a Service: a DNS label; the shard is also a label value.
  shard: (v) => (isDnsName(`crownlabs-controller-${v as string}`, 63) && !(v as string).includes('.') ? undefined : `has ${show(v)}: a shard must be lowercase letters, digits and '-', at most 42 characters`),
};

/** Parses a value given as a string (flag, environment) or as YAML (config file), then checks it. */
export function parseValue(def: ConfigKeyDef, raw: unknown): { value?: unknown; error?: string } {
  const parsed = parseTyped(def, raw);
  if (parsed.error || !def.check) return parsed;
  const check = VALUE_CHECKS[def.check];
  const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  const emptyAllowed = def.default === '';
  for (const v of values) {
    if (v === '' && emptyAllowed) continue;
    const error = check(v);
    if (error) return { error: def.secret ? error.replace(/, not ".*"$/, '') : error };
  }
  return parsed;
}

function parseTyped(def: ConfigKeyDef, raw: unknown): { value?: unknown; error?: string } {
  switch (def.type) {
    case 'string':
      return typeof raw === 'string' ? { value: raw } : { error: 'must be a string' };
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      // Kubernetes integer fields are int32.
      return Number.isInteger(n) && n >= 0 && n <= 2 ** 31 - 1 ? { value: n } : { error: `must be a non-negative integer (at most ${2 ** 31 - 1}), not ${show(raw)}` };
    }
    case 'bool':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return { error: 'must be true or false' };
    case 'quantity': {
      const s = typeof raw === 'number' ? String(raw) : raw;
      if (typeof s !== 'string' || !QUANTITY_PATTERN.test(s)) return { error: `must be a Kubernetes quantity (e.g. 25, 50G, 1Gi), not ${show(raw)}` };
      const sign = quantitySign(s);
      if (sign === undefined) return { error: `must be a Kubernetes quantity the API server can hold (e.g. 25, 50G, 1Gi), not ${show(raw)}` };
      return sign >= 0 ? { value: s } : { error: `must not be negative, not ${show(raw)}` };
    }
    case 'bytes': {
      const m = typeof raw === 'string' ? BYTES.exec(raw.trim()) : null;
      const n = typeof raw === 'number' ? raw : m ? Number(m[1]) * BYTE_UNITS[m[2] ?? ''] : NaN;
      return Number.isSafeInteger(n) && n >= 1 && n <= MAX_BYTES ? { value: n } : { error: 'must be a whole number of bytes from 1 to 1Gi, with an optional suffix Ki, Mi, Gi, k, M or G (e.g. 16Mi)' };
    }
    case 'enum':
      return typeof raw === 'string' && def.enumValues?.includes(raw)
        ? { value: raw }
        : { error: `must be one of ${def.enumValues?.join(', ')}` };
    case 'list': {
      let items: string[];
      if (Array.isArray(raw) && raw.every((x) => typeof x === 'string')) items = [...raw];
      else if (typeof raw === 'string') items = raw.split(',').map((s) => s.trim()).filter(Boolean);
      else return { error: 'must be a list of strings (or a comma-separated string)' };
      const unknown = def.enumValues ? items.filter((x) => !def.enumValues!.includes(x)) : [];
      return unknown.length ? { error: `has ${unknown.map((x) => `"${x}"`).join(', ')}; each item must be one of ${def.enumValues!.join(', ')}` } : { value: items };
    }
    case 'label': {
      if (typeof raw !== 'string') return { error: 'must be a single key=value' };
      const parts = raw.split('=');
      if (parts.length !== 2 || !parts[0] || !isLabelKey(parts[0]) || !isLabelValue(parts[1])) {
        return { error: `"${raw}" must be exactly one key=value with a valid label key and value` };
      }
      return { value: { key: parts[0], value: parts[1] } };
    }
    case 'kvmap': {
      let entries: [string, unknown][];
      if (raw && typeof raw === 'object' && !Array.isArray(raw)) entries = Object.entries(raw);
      else if (typeof raw === 'string') {
        if (raw === '') return { value: {} };
        entries = [];
        for (const item of raw.split('&')) {
          const kv = item.split('=');
          if (kv.length !== 2) return { error: `"${item}" is not key=value (items are joined with &)` };
          entries.push([kv[0], kv[1]]);
        }
      } else return { error: 'must be k1=v1&k2=v2 or a mapping' };
      for (const [k, v] of entries) {
        if (def.annotationValues ? !isLabelKey(k) || typeof v !== 'string' : !isLabelKey(k) || typeof v !== 'string' || !isLabelValue(v)) {
          return { error: `"${k}=${String(v)}" is not a valid ${def.annotationValues ? 'annotation' : 'label'}` };
        }
      }
      return { value: Object.fromEntries(entries) };
    }
  }
}

const BYTES = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/;
const BYTE_UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };
const MAX_BYTES = 2 ** 30;

function firstLine(s: string): string {
  return s.split('\n')[0];
}
