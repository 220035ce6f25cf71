/**
 * The ledger of Instances the quota webhook admitted a moment ago (docs/behaviour.md §16.6): the
 * API server stores an admitted Instance after the webhook answers, so a request judged at the
 * same time would not see it listed. Each tenant namespace has one ConfigMap in the install
 * namespace; an admission that lets an Instance run adds its entry there with the ConfigMap's
 * resourceVersion as precondition, so of two requests that read the same ledger only one writes,
 * and the other judges again and counts it.
 */
import type { KubeObject } from '../inputs/types.ts';
import { formatQuantity, parseQuantity } from '../inputs/quantity.ts';
import { isConflict, isNotFound, type KubeClient } from '../kube/client.ts';
import type { Usage } from '../model/instance-quota.ts';

/** How long an admitted Instance counts as pending: far longer than an admission takes to be stored. */
export const LEDGER_TTL_MS = 60_000;
const LEDGER_PREFIX = 'crownlabs-instance-quota.';

export interface LedgerEntry {
  workspace: string;
  usage: Usage;
  /** When it was admitted (ms since the epoch). */
  at: number;
  /** A resume: the Instance's resourceVersion before it; the entry is settled once the Instance has another. */
  before?: string;
}

export interface Ledger {
  entries: ReadonlyMap<string, LedgerEntry>;
  /** The ConfigMap's resourceVersion; undefined: there is none yet. */
  version?: string;
}

/** Reads and writes the ledgers; `write` answers false when another writer came first. */
export interface LedgerStore {
  read(namespace: string): Promise<Ledger>;
  write(namespace: string, previous: Ledger, entries: ReadonlyMap<string, LedgerEntry>, owner: { name: string; uid: string }): Promise<boolean>;
}

export function ledgerName(namespace: string): string {
  return `${LEDGER_PREFIX}${namespace}`;
}

interface StoredEntry {
  workspace: string;
  instances: number;
  cpu: string;
  memory: string;
  disk: string;
  other?: Record<string, string>;
  at: number;
  before?: string;
}

function encodeEntry(e: LedgerEntry): string {
  const stored: StoredEntry = {
    workspace: e.workspace,
    instances: e.usage.instances,
    cpu: e.usage.cpu.toString(),
    memory: formatQuantity(e.usage.memory),
    disk: formatQuantity(e.usage.disk),
    ...(e.usage.other.size ? { other: Object.fromEntries([...e.usage.other].map(([k, v]) => [k, formatQuantity(v)])) } : {}),
    at: e.at,
    ...(e.before !== undefined ? { before: e.before } : {}),
  };
  return JSON.stringify(stored);
}

/** An entry that does not read back is dropped: the ledger only ever makes the webhook stricter. */
function decodeEntry(text: string): LedgerEntry | undefined {
  try {
    const s = JSON.parse(text) as StoredEntry;
    if (typeof s.workspace !== 'string' || typeof s.at !== 'number' || !Number.isInteger(s.instances)) return undefined;
    return {
      workspace: s.workspace,
      at: s.at,
      ...(typeof s.before === 'string' ? { before: s.before } : {}),
      usage: {
        instances: s.instances,
        cpu: BigInt(s.cpu),
        memory: parseQuantity(s.memory),
        disk: parseQuantity(s.disk),
        other: new Map(Object.entries(s.other ?? {}).map(([k, v]) => [k, parseQuantity(v)])),
      },
    };
  } catch {
    return undefined;
  }
}

/** An Instance as a consistent list shows it. */
export interface ListedInstance {
  running: boolean;
  resourceVersion?: string;
}

/**
 * The entries still pending at `now`, given the namespace's Instances: not expired, and not yet
 * stored. A create is stored once its Instance is listed; a resume once the Instance is listed
 * running or with another resourceVersion than before it (a stop right after, say).
 */
export function stillPending(entries: ReadonlyMap<string, LedgerEntry>, listed: ReadonlyMap<string, ListedInstance>, now: number): Map<string, LedgerEntry> {
  return new Map(
    [...entries].filter(([name, e]) => {
      if (now - e.at >= LEDGER_TTL_MS || e.at > now + LEDGER_TTL_MS) return false;
      const i = listed.get(name);
      return !i || (!i.running && e.before !== undefined && e.before === i.resourceVersion);
    }),
  );
}

type LedgerConfigMap = KubeObject & { data?: Record<string, string> };

/**
 * The ledgers as ConfigMaps of `namespace`, read and written by the webhook server's client. Each
 * is owned by its Tenant, so the garbage collector removes it with the Tenant.
 */
export function configMapLedgers(client: KubeClient, namespace: string): LedgerStore {
  const path = (name?: string) => client.path('v1', 'ConfigMap', namespace, name);
  return {
    async read(ns) {
      let cm: LedgerConfigMap;
      try {
        cm = await client.request<LedgerConfigMap>('GET', path(ledgerName(ns)));
      } catch (e) {
        if (isNotFound(e)) return { entries: new Map() };
        throw e;
      }
      const entries = new Map<string, LedgerEntry>();
      for (const [name, text] of Object.entries(cm.data ?? {})) {
        const entry = decodeEntry(text);
        if (entry) entries.set(name, entry);
      }
      return { entries, version: cm.metadata.resourceVersion };
    },
    async write(ns, previous, entries, owner) {
      const body: LedgerConfigMap = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: ledgerName(ns),
          namespace,
          labels: { 'app.kubernetes.io/part-of': 'crownlabs', 'app.kubernetes.io/component': 'instance-quota-ledger' },
          ownerReferences: [{ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', name: owner.name, uid: owner.uid }],
          ...(previous.version ? { resourceVersion: previous.version } : {}),
        },
        data: Object.fromEntries([...entries].map(([name, e]) => [name, encodeEntry(e)])),
      };
      try {
        if (previous.version) await client.request('PUT', path(ledgerName(ns)), { body });
        else await client.request('POST', path(), { body });
        return true;
      } catch (e) {
        // 409: changed since it was read, or created by another replica meanwhile.
        if (isConflict(e)) return false;
        throw e;
      }
    },
  };
}
