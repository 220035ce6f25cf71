import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import type { Problem } from '../api/problems.ts';
import { QUANTITY_PATTERN } from '../api/schema-validator.ts';
import { CONFIG_KEYS, envVarName, MIN_SEED_LENGTH, type ConfigKeyDef, type ValueCheck } from './keys.ts';

export interface LabelSelector {
  key: string;
  value: string;
}

/** The validated configuration every part of the composer reads. */
export interface ComposerConfig {
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
    let fileValues: unknown;
    try {
      fileValues = parseYaml(readFileSync(sources.file, 'utf8'));
    } catch (err) {
      problems.push({ severity: 'error', file: sources.file, message: `cannot read config: ${firstLine((err as Error).message)}` });
    }
    if (fileValues !== undefined && fileValues !== null) {
      if (typeof fileValues !== 'object' || Array.isArray(fileValues)) {
        problems.push({ severity: 'error', file: sources.file, message: 'the config file must be a mapping of keys to values' });
      } else {
        for (const [key, raw] of Object.entries(fileValues as Record<string, unknown>)) {
          const def = defs.find((d) => d.key === key);
          if (!def) {
            problems.push({ severity: 'error', file: sources.file, field: key, message: `unknown config key (known: ${defs.map((d) => d.key).join(', ')})` });
            continue;
          }
          if (def.envOnly) envOnly(def, { file: sources.file, field: key });
          else set(def, raw, { file: sources.file, field: key });
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
  return { config: config as unknown as ComposerConfig, problems };
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

/** Checks of parsed values, by the name a key's `check` gives; each returns an error or nothing. */
const VALUE_CHECKS: Record<ValueCheck, (value: unknown) => string | undefined> = {
  'secret-seed': (v) => (v === '' || (v as string).length >= MIN_SEED_LENGTH ? undefined : `must be at least ${MIN_SEED_LENGTH} characters (e.g. \`openssl rand -hex 32\`), or empty`),
};

/** Parses a value given as a string (flag, environment) or as YAML (config file), then checks it. */
export function parseValue(def: ConfigKeyDef, raw: unknown): { value?: unknown; error?: string } {
  const parsed = parseTyped(def, raw);
  if (parsed.error || !def.check) return parsed;
  const error = VALUE_CHECKS[def.check](parsed.value);
  return error ? { error } : parsed;
}

function parseTyped(def: ConfigKeyDef, raw: unknown): { value?: unknown; error?: string } {
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
