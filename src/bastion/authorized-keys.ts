/**
 * The bastion's authorized_keys file from Tenants' `spec.publicKeys` (docs/behaviour.md §12), pure.
 * Upstream behaviour kept: a line belongs to a tenant when its comment (what follows the second
 * space) equals the tenant name; lines that are not `<algo> <key> <comment>` are kept untouched;
 * every key becomes `<algo> <key> <tenant>` (the original comment dropped); lines are joined with
 * `\n` and no trailing newline.
 * Deliberate differences: removal keeps the order of the remaining lines (upstream swap-removes),
 * an empty file is zero lines (upstream's split gives one empty line, hence a leading blank line),
 * and key fields are split on runs of whitespace, with the algorithm one of the OpenSSH key types
 * and the key base64 (src/model/ssh-public-key.ts), so that an entry cannot smuggle in sshd options.
 */
import { parsePublicKey } from '../model/ssh-public-key.ts';

export interface TenantKeys {
  name: string;
  publicKeys?: readonly string[];
}

export interface InvalidKey {
  tenant: string;
  /** Index in `spec.publicKeys`. */
  index: number;
  key: string;
  reason: string;
}

export interface KeysUpdate {
  text: string;
  invalid: InvalidKey[];
}

export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split('\n');
}

/** The comment of a line split as upstream does (first two spaces); undefined for a line with fewer than three fields. */
export function lineComment(line: string): string | undefined {
  const first = line.indexOf(' ');
  if (first < 0) return undefined;
  const second = line.indexOf(' ', first + 1);
  return second < 0 ? undefined : line.slice(second + 1);
}

/** `<algo> <key> <tenant>` of a public key entry, or why it is not usable. */
export function authorizedKeyLine(entry: string, tenant: string): { line: string } | { reason: string } {
  const p = parsePublicKey(entry);
  return 'reason' in p ? p : { line: `${p.type} ${p.key} ${tenant}` };
}

function tenantLines(tenant: TenantKeys): { lines: string[]; invalid: InvalidKey[] } {
  const lines: string[] = [];
  const invalid: InvalidKey[] = [];
  (tenant.publicKeys ?? []).forEach((key, index) => {
    const r = authorizedKeyLine(key, tenant.name);
    if ('line' in r) lines.push(r.line);
    else invalid.push({ tenant: tenant.name, index, key: key.slice(0, 80), reason: r.reason });
  });
  return { lines, invalid };
}

/**
 * One Tenant event: the tenant's lines are removed, and when the Tenant exists (`tenant` given
 * with its keys) its valid keys are appended; unchanged keys leave the file untouched. `deleted` tenants pass only their name.
 */
export function updateAuthorizedKeys(current: string, tenant: TenantKeys, exists = true): KeysUpdate {
  const all = splitLines(current);
  const kept = all.filter((l) => lineComment(l) !== tenant.name);
  if (!exists) return { text: kept.join('\n'), invalid: [] };
  const { lines, invalid } = tenantLines(tenant);
  // An event that leaves the keys as they are (a status write, the informer's first list) keeps the file as it is.
  const had = all.filter((l) => lineComment(l) === tenant.name);
  if (had.length === lines.length && had.every((l, i) => l === lines[i])) return { text: current, invalid };
  return { text: [...kept, ...lines].join('\n'), invalid };
}

/**
 * All Tenants at once (start-up, re-list): every tenant's lines are replaced by its current keys,
 * tenants in name order; other lines stay where they are. A line of a Tenant deleted while nobody
 * watched stays, as upstream (the file lives in an emptyDir, so a new pod starts from nothing).
 */
export function syncAuthorizedKeys(current: string, tenants: readonly TenantKeys[]): KeysUpdate {
  const sorted = [...tenants].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const names = new Set(sorted.map((t) => t.name));
  const kept = splitLines(current).filter((l) => !names.has(lineComment(l) as string));
  const invalid: InvalidKey[] = [];
  const added: string[] = [];
  for (const t of sorted) {
    const r = tenantLines(t);
    added.push(...r.lines);
    invalid.push(...r.invalid);
  }
  return { text: [...kept, ...added].join('\n'), invalid };
}
