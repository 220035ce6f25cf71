import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';
import { readInputFile } from '../api/input-file.ts';
import { expandAliases, MAX_ALIAS_VALUES } from '../api/yaml-aliases.ts';
import type { Problem } from '../api/problems.ts';
import { QUANTITY_PATTERN } from '../api/schema-validator.ts';
import { CONFIG_KEYS, envVarName, type ConfigKeyDef } from './keys.ts';

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
  oauth2ProxyImage: string;
  oidcIssuerUrl: string;
  oidcClientId: string;
  oidcClientSecret: string;
  cookieSecretSeed: string;
  targetLabel: LabelSelector;
  mydrivePvcsSize: string;
  mydrivePvcsStorageClassName: string;
  mydrivePvcsNamespace: string;
  mydriveNfsServerName: string;
  mydriveNfsPathTemplate: string;
  sandboxClusterRole: string;
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
  platformControllerReplicas: number;
  platformControllerCpu: string;
  platformControllerMemory: string;
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
            problems.push({ severity: 'error', ...where, message: `unknown config key (known: ${defs.map((d) => d.key).join(', ')})` });
            continue;
          }
          set(def, raw, where);
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
    if (raw !== undefined) set(def, raw, { file: `flag ${def.flag}`, field: def.key });
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

/** Parses a value given as a string (flag, environment) or as YAML (config file). */
export function parseValue(def: ConfigKeyDef, raw: unknown): { value?: unknown; error?: string } {
  switch (def.type) {
    case 'string':
      return typeof raw === 'string' ? { value: raw } : { error: 'must be a string' };
    case 'int': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      return Number.isInteger(n) && n >= 0 ? { value: n } : { error: 'must be a non-negative integer' };
    }
    case 'bool':
      if (typeof raw === 'boolean') return { value: raw };
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' };
      return { error: 'must be true or false' };
    case 'quantity': {
      const s = typeof raw === 'number' ? String(raw) : raw;
      return typeof s === 'string' && QUANTITY_PATTERN.test(s) ? { value: s } : { error: 'must be a Kubernetes quantity (e.g. 25, 50G, 1Gi)' };
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
        if (!isLabelKey(k) || typeof v !== 'string' || !isLabelValue(v)) return { error: `"${k}=${String(v)}" is not a valid label` };
      }
      return { value: Object.fromEntries(entries) };
    }
  }
}

const BYTES = /^(\d+)(Ki|Mi|Gi|k|M|G)?$/;
const BYTE_UNITS: Record<string, number> = { '': 1, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9 };
const MAX_BYTES = 2 ** 30;

const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function isLabelKey(key: string): boolean {
  const slash = key.lastIndexOf('/');
  if (slash < 0) return LABEL_NAME.test(key);
  const prefix = key.slice(0, slash);
  return prefix.length <= 253 && DNS_SUBDOMAIN.test(prefix) && LABEL_NAME.test(key.slice(slash + 1));
}

export function isLabelValue(value: string): boolean {
  return value === '' || LABEL_NAME.test(value);
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
