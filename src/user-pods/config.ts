/**
 * Configuration of `crownlabs user-pods-api` (the ScienceData user-pods backend, seed 004): the
 * seed's keys from a YAML or JSON file, each overridable by `BACKEND_<KEY IN CAPITALS>` (e.g.
 * ingressDomain → BACKEND_INGRESSDOMAIN), validated with ajv. As the seed's viper, file keys are
 * matched case-insensitively (its config.yaml writes `whitelistmanifestregex`).
 */
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import { Ajv, type ErrorObject } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { parseDuration } from '../model/duration.ts';
import { nearest } from '../config/suggest.ts';
import { parseManifestPrefix } from './manifest.ts';

export interface HostnameEntry {
  hostname: string;
  address: string;
}

export interface UserPodsConfig {
  defaultRestartPolicy: 'Always' | 'OnFailure' | 'Never' | '';
  /** Milliseconds (the file takes Go durations such as `90s` or `1h2m3s`). */
  timeoutCreate: number;
  timeoutDelete: number;
  namespace: string;
  /** Accepted for compatibility; unused: every piece of state lives in the cluster. */
  podCacheDir: string;
  /** Legacy (seed): converted into `manifestUrlPrefixes` when it spells a plain URL prefix. */
  whitelistManifestRegex: string;
  /** Where create_pod manifests may come from: `scheme://host[:port]/path` prefixes (effective, after loading). */
  manifestUrlPrefixes: string[];
  tokenByteLimit: number;
  nfsStorageRoot: string;
  testingHost: string;
  localRegistryURL: string;
  localRegistrySecret: string;
  ingressDomain: string;
  ingressWildcardSecret: string;
  hostnameList: HostnameEntry[];
  /** Peers (IPs or CIDRs) whose X-Forwarded-For is believed: the ingress controller, a front proxy. */
  trustedProxies: string[];
}

type KeyType = 'string' | 'duration' | 'int' | 'hostnames' | 'list';

/** Every key with its type, default (the seed's config.yaml) and meaning; docs/user-pods-api.md's table follows it. */
export const USER_PODS_KEYS: readonly { key: keyof UserPodsConfig; type: KeyType; default: unknown; doc: string }[] = [
  { key: 'defaultRestartPolicy', type: 'string', default: 'Never', doc: 'restartPolicy of pods whose manifest sets none: Always, OnFailure, Never (or empty: the API default).' },
  { key: 'timeoutCreate', type: 'duration', default: '1m30s', doc: 'How long a pod may take to become Ready; then it and its objects are deleted.' },
  { key: 'timeoutDelete', type: 'duration', default: '1m30s', doc: 'How long deletions are waited for before giving up.' },
  { key: 'namespace', type: 'string', default: 'sciencedata', doc: 'Namespace of the user pods and their objects (and of the TLS and registry Secrets).' },
  { key: 'podCacheDir', type: 'string', default: '/tmp/podcaches', doc: 'Accepted and ignored: tokens and state live in the cluster, not in local files.' },
  { key: 'whitelistManifestRegex', type: 'string', default: 'https:\\/\\/raw[.]githubusercontent[.]com\\/deic-dk\\/pod_manifests', doc: 'Legacy (seed): used only when it spells a plain URL prefix (`\\/`, `\\.` and `[.]` escapes, an optional leading `^`), which becomes the one manifestUrlPrefixes entry; any other regex is refused.' },
  { key: 'manifestUrlPrefixes', type: 'list', default: [], doc: 'URL prefixes (`https://host[:port]/path/`) a create_pod yaml_url must lie under: same scheme, host and port, path inside the prefix\'s at a segment boundary, after normalisation. Empty: the prefix whitelistManifestRegex spells.' },
  { key: 'tokenByteLimit', type: 'int', default: 4096, doc: 'Most bytes copied for one token.' },
  { key: 'nfsStorageRoot', type: 'string', default: '/tank/storage', doc: 'NFS path prefix of the users\' storage (`<root>/<user_id>`).' },
  { key: 'testingHost', type: 'string', default: '10.0.0.20', doc: 'Address used as the requester\'s (silo) IP when a request comes from loopback.' },
  { key: 'localRegistryURL', type: 'string', default: '', doc: 'Replaces LOCALREGISTRY in container images.' },
  { key: 'localRegistrySecret', type: 'string', default: 'docker-registry-auth', doc: 'imagePullSecret added to pods pulling from the local registry (empty: none).' },
  { key: 'ingressDomain', type: 'string', default: '', doc: 'Pods get the host `<pod>.<ingressDomain>`.' },
  { key: 'ingressWildcardSecret', type: 'string', default: 'user-pods-wildcard', doc: 'TLS Secret with the `*.<ingressDomain>` certificate.' },
  { key: 'hostnameList', type: 'hostnames', default: [], doc: 'List of {hostname, address} of the silos: HOME_SERVER_HOSTNAME/HOME_SERVER_IP of a pod follow the requester\'s IP.' },
  { key: 'trustedProxies', type: 'list', default: [], doc: 'IPs or CIDRs of the proxies (ingress controller) whose X-Forwarded-For is believed; from anyone else the header is ignored and the peer address is the requester\'s IP.' },
];

export function userPodsEnvVar(key: string): string {
  return `BACKEND_${key.toUpperCase()}`;
}

const hostnameListSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['hostname', 'address'],
    additionalProperties: false,
    properties: { hostname: { type: 'string', minLength: 1 }, address: { type: 'string', minLength: 1 } },
  },
};

const fileSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    defaultRestartPolicy: { type: 'string', enum: ['Always', 'OnFailure', 'Never', ''] },
    timeoutCreate: { type: 'string', minLength: 1 },
    timeoutDelete: { type: 'string', minLength: 1 },
    namespace: { type: 'string', pattern: '^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$' },
    podCacheDir: { type: 'string' },
    whitelistManifestRegex: { type: 'string', minLength: 1 },
    manifestUrlPrefixes: { type: 'array', items: { type: 'string', minLength: 1 } },
    tokenByteLimit: { type: 'integer', minimum: 1 },
    nfsStorageRoot: { type: 'string' },
    testingHost: { type: 'string' },
    localRegistryURL: { type: 'string' },
    localRegistrySecret: { type: 'string' },
    ingressDomain: { type: 'string' },
    ingressWildcardSecret: { type: 'string' },
    hostnameList: hostnameListSchema,
    trustedProxies: { type: 'array', items: { type: 'string', minLength: 1 } },
  },
} as const;

const ajv = new Ajv({ allErrors: true, strict: false });
const validateFile = ajv.compile(fileSchema);

function describe(e: ErrorObject, where: string): string {
  const field = e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : '';
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    if (field) return `${where}: ${field}.${extra}: unknown field`;
    const near = nearest(extra, USER_PODS_KEYS, (k) => [k.key]);
    return `${where}: unknown config key "${extra}"${near ? `: did you mean ${near.key}?` : ` (known: ${USER_PODS_KEYS.map((k) => k.key).join(', ')})`}`;
  }
  if (e.keyword === 'enum') return `${where}: ${field}: must be one of ${(e.params as { allowedValues: string[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  return `${where}: ${field || '(top level)'}: ${e.message ?? 'invalid'}`;
}

/**
 * Defaults < file < `BACKEND_*` environment. Returns every problem (file, key, why); the
 * configuration is only usable when `problems` is empty.
 */
export function loadUserPodsConfig(sources: { file?: string; env?: Record<string, string | undefined> } = {}): { config: UserPodsConfig; problems: string[] } {
  const problems: string[] = [];
  const explicit = new Set<string>();
  const raw: Record<string, unknown> = {};
  for (const k of USER_PODS_KEYS) raw[k.key] = k.default;
  const byLower = new Map(USER_PODS_KEYS.map((k) => [k.key.toLowerCase(), k]));

  if (sources.file) {
    let parsed: unknown;
    try {
      parsed = parseYaml(readFileSync(sources.file, 'utf8')); // YAML is a superset of JSON
    } catch (e) {
      problems.push(`${sources.file}: cannot read config: ${(e as Error).message.split('\n')[0]}`);
    }
    if (parsed !== undefined && parsed !== null) {
      if (typeof parsed !== 'object' || Array.isArray(parsed)) problems.push(`${sources.file}: the config file must be a mapping of keys to values`);
      else {
        const normalised: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
          const def = byLower.get(key.toLowerCase());
          normalised[def ? def.key : key] = value;
        }
        if (!validateFile(normalised)) for (const e of validateFile.errors ?? []) problems.push(describe(e, sources.file));
        else Object.assign(raw, normalised);
        for (const key of Object.keys(normalised)) explicit.add(key);
      }
    }
  }

  for (const def of USER_PODS_KEYS) {
    const value = sources.env?.[userPodsEnvVar(def.key)];
    if (value === undefined) continue;
    const where = `environment ${userPodsEnvVar(def.key)}`;
    let typed: unknown = value;
    if (def.type === 'int') typed = /^\d+$/.test(value.trim()) ? Number(value) : value;
    // A list: JSON, or comma-separated.
    if (def.type === 'list') typed = value.trim().startsWith('[') ? tryJson(value) : value.split(',').map((v) => v.trim()).filter(Boolean);
    if (def.type === 'hostnames') {
      try {
        typed = JSON.parse(value);
      } catch {
        problems.push(`${where}: must be a JSON list of {"hostname": ..., "address": ...}`);
        continue;
      }
    }
    const one = { [def.key]: typed };
    if (!validateFile(one)) for (const e of validateFile.errors ?? []) problems.push(describe(e, where));
    else raw[def.key] = typed;
    explicit.add(def.key);
  }

  const config = { ...raw } as unknown as UserPodsConfig;
  for (const key of ['timeoutCreate', 'timeoutDelete'] as const) {
    try {
      config[key] = parseDuration(String(raw[key]));
    } catch (e) {
      problems.push(`${key}: ${(e as Error).message}`);
    }
  }
  if (config.manifestUrlPrefixes.length === 0) {
    const prefix = regexPrefix(config.whitelistManifestRegex);
    if (prefix === undefined) {
      problems.push(
        `whitelistManifestRegex: "${config.whitelistManifestRegex}" is not a plain URL prefix; a regular expression cannot be checked safely against a URL (unanchored, ".." segments, look-alike hosts): list the allowed locations in manifestUrlPrefixes instead`,
      );
    } else config.manifestUrlPrefixes = [prefix];
  } else if (explicit.has('whitelistManifestRegex')) {
    problems.push('whitelistManifestRegex and manifestUrlPrefixes are both set: keep only manifestUrlPrefixes');
  }
  for (const [i, p] of config.manifestUrlPrefixes.entries()) {
    try {
      parseManifestPrefix(p);
    } catch (e) {
      problems.push(`manifestUrlPrefixes[${i}]: ${(e as Error).message}`);
    }
  }
  if (!isIP(config.testingHost)) problems.push(`testingHost: "${config.testingHost}" is not an IP address`);
  for (const [i, h] of config.hostnameList.entries()) {
    if (!isIP(h.address)) problems.push(`hostnameList[${i}].address: "${h.address}" is not an IP address`);
  }
  for (const [i, p] of (config.trustedProxies ?? []).entries()) {
    const why = addressRangeProblem(p);
    if (why) problems.push(`trustedProxies[${i}]: "${p}" ${why}`);
  }
  return { config, problems };
}

/**
 * The URL a legacy whitelist regex spells when it is a plain prefix: an optional `^`, then
 * characters that stand for themselves (`\x` for a punctuation x, `[c]` for one character; a bare
 * `.` is read as a dot, narrower than the regex). Undefined for any other regex.
 */
export function regexPrefix(regex: string): string | undefined {
  let out = '';
  const re = regex.startsWith('^') ? regex.slice(1) : regex;
  for (let i = 0; i < re.length; i++) {
    const c = re[i]!;
    if (c === '\\') {
      const next = re[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return undefined; // \d, \w, \b…: not literal
      out += next;
      i++;
    } else if (c === '[') {
      const m = /^\[(\\[^A-Za-z0-9]|[^\]\\^])\]/.exec(re.slice(i));
      if (!m) return undefined;
      out += m[1]!.length === 2 ? m[1]![1] : m[1];
      i += m[0].length - 1;
    } else if ('^$*+?()|{}]'.includes(c)) return undefined;
    else out += c;
  }
  return out;
}

function tryJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text; // the schema then says it is not a list
  }
}

/** Why `range` is not an IP address or CIDR (`10.0.0.0/8`, `fd00::/8`), or undefined. */
export function addressRangeProblem(range: string): string | undefined {
  const [ip, prefix, ...rest] = range.split('/');
  const family = isIP(ip ?? '');
  if (!family || rest.length) return 'is not an IP address or CIDR';
  if (prefix === undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= max ? undefined : `has a prefix length outside 0…${max}`;
}

/** The trusted proxies as a BlockList (its check() matches IPv4-mapped IPv6 addresses too). */
export function proxyList(ranges: readonly string[]): BlockList {
  const list = new BlockList();
  for (const r of ranges) {
    const [ip, prefix] = r.split('/') as [string, string | undefined];
    const type = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(ip, type);
    else list.addSubnet(ip, Number(prefix), type);
  }
  return list;
}
