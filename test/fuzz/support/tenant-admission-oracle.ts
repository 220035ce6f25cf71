// What the Tenant webhooks must decide, written from docs/behaviour.md §6.1 and §6.2 (and §16.4 at
// API level e62be9e) alone (not from src/webhooks/), for the decision fuzz to check the server against.
import type { AutoEnroll, Tenant, TenantWorkspaceEntry } from '../../../src/inputs/types.ts';

export interface OracleWorld {
  targetLabel: { key: string; value: string };
  baseWorkspaces: readonly string[];
  bypassGroups: readonly string[];
  bypassUsers: readonly string[];
  /** The requesters' own Tenants, by name. */
  tenants: ReadonlyMap<string, Tenant>;
  now: number;
  /** e62be9e: §16.4's validation; default 2e8aeb9. */
  level?: '2e8aeb9' | 'e62be9e';
  /** e62be9e: the Workspaces that exist, with their autoEnroll. */
  workspaces?: ReadonlyMap<string, AutoEnroll | undefined>;
}

export interface OracleRequest {
  operation: 'CREATE' | 'UPDATE';
  username: string;
  groups: string[];
  object: Tenant;
  /** UPDATE only. */
  oldObject?: Tenant;
}

/** `rule`: which rule decided (§6.2 item), for the fuzz to show that every one of them is reached. */
export type Verdict = { rule: string } & (
  | { allowed: true; labels: Record<string, string>; workspaces: TenantWorkspaceEntry[]; warnings: string[] }
  | { allowed: false; code: 400 | 403 | 500; why: string; accepts(message: string): boolean }
);

const SERVICE_TENANT = 'service-tenant';
const DAY = 24 * 3600_000;

const isBypass = (world: OracleWorld, req: Pick<OracleRequest, 'username' | 'groups'>) => world.bypassUsers.includes(req.username) || req.groups.some((g) => world.bypassGroups.includes(g));

/** The mutating hook's labels, workspaces and warnings (§6.1). */
export function expectedMutation(world: OracleWorld, req: OracleRequest): { labels: Record<string, string>; workspaces: TenantWorkspaceEntry[]; warnings: string[] } {
  const bypass = isBypass(world, req);
  const { key, value } = world.targetLabel;
  const labels = { ...(req.object.metadata.labels ?? {}) };
  const warnings: string[] = [];
  const mine = labels[key] ?? '';
  if (req.object.metadata.name === SERVICE_TENANT) {
    if (mine !== '') {
      labels[key] = '';
      warnings.push('operator selector label must not be present on service tenant and has been removed');
    }
  } else if (mine !== '' && bypass) {
    // kept
  } else if (req.operation === 'CREATE') {
    labels[key] = value;
  } else {
    const oldLabels = req.oldObject?.metadata.labels ?? {};
    if (mine !== (oldLabels[key] ?? '')) {
      if (key in oldLabels) labels[key] = oldLabels[key];
      else delete labels[key];
      warnings.push('operator selector label change is prohibited and has been reverted');
    }
  }
  const workspaces = [...(req.object.spec.workspaces ?? [])];
  for (const ws of world.baseWorkspaces) if (!workspaces.some((w) => w.name === ws)) workspaces.push({ name: ws, role: 'user' });
  return { labels, workspaces, warnings };
}

const roleIn = (entries: readonly TenantWorkspaceEntry[] | undefined, ws: string) => entries?.find((e) => e.name === ws)?.role;
const sameList = (a: readonly unknown[] | undefined, b: readonly unknown[] | undefined) => JSON.stringify(a ?? []) === JSON.stringify(b ?? []);
/** Absent lastLogin is Go's zero time; equal instants written differently are the same. */
const loginAt = (t: Tenant['spec'] | undefined) => (t?.lastLogin === undefined ? undefined : Date.parse(t.lastLogin));
const sameLogin = (a: Tenant['spec'] | undefined, b: Tenant['spec'] | undefined) => loginAt(a) === loginAt(b);
const sameQuota = (a: Tenant['spec'] | undefined, b: Tenant['spec'] | undefined) => JSON.stringify(a?.quota ?? null) === JSON.stringify(b?.quota ?? null);

/** Fields of the spec other than workspaces, publicKeys and lastLogin that differ (absent = zero value). */
function otherDifferences(a: Tenant['spec'] | undefined, b: Tenant['spec'] | undefined): string[] {
  const out: string[] = [];
  for (const f of ['firstName', 'lastName', 'email'] as const) if ((a?.[f] ?? '') !== (b?.[f] ?? '')) out.push(f);
  if ((a?.createSandbox ?? false) !== (b?.createSandbox ?? false)) out.push('createSandbox');
  if (!sameQuota(a, b)) out.push('quota');
  return out;
}

const exactly = (text: string) => (m: string) => m === text;

export function expectedVerdict(world: OracleWorld, req: OracleRequest): Verdict {
  const bypass = isBypass(world, req);
  const m = expectedMutation(world, req);
  if (bypass) return { rule: 'bypass', allowed: true, ...m };
  const next: Tenant['spec'] = { ...req.object.spec, workspaces: m.workspaces };
  // On CREATE the old object is the empty Tenant.
  const prev: Tenant['spec'] | undefined = req.operation === 'UPDATE' ? req.oldObject?.spec : undefined;
  if (world.level === 'e62be9e') return e62be9eVerdict(world, req, next, prev, m);

  if (req.username === req.object.metadata.name) {
    if (!sameLogin(next, prev)) {
      const at = loginAt(next);
      if (at === undefined || Math.abs(at - world.now) > DAY) {
        return { rule: 'owner: lastLogin', allowed: false, code: 403, why: 'own lastLogin out of range', accepts: (s) => s.startsWith('unacceptable last login time, must be within +/-24h0m0s since local server time') };
      }
    }
    const diff = otherDifferences(next, prev);
    if (!sameList(next.workspaces, prev?.workspaces)) diff.push('workspaces');
    if (diff.length) return { rule: 'owner: other field', allowed: false, code: 403, why: `own ${diff.join(', ')} changed`, accepts: exactly('only changes to public keys are allowed in the owned tenant') };
    return { rule: 'owner: allowed', allowed: true, ...m };
  }

  const requester = world.tenants.get(req.username);
  if (!requester) return { rule: 'no Tenant', allowed: false, code: 400, why: 'requester without a Tenant', accepts: (s) => s.startsWith('could not fetch a tenant for the current user') };
  const names = new Set([...(next.workspaces ?? []), ...(prev?.workspaces ?? [])].map((w) => w.name));
  const unmanaged = [...names].filter((ws) => roleIn(next.workspaces, ws) !== roleIn(prev?.workspaces, ws) && roleIn(requester.spec.workspaces, ws) !== 'manager');
  if (unmanaged.length) {
    const allowedMessages = unmanaged.map((ws) => `you are not a manager for workspace <${ws}>`);
    return { rule: 'not a manager', allowed: false, code: 403, why: `changes in ${unmanaged.join(', ')}, not managed`, accepts: (s) => allowedMessages.includes(s) };
  }
  if (req.operation === 'UPDATE') {
    const diff = otherDifferences(next, prev);
    if (!sameList(next.publicKeys, prev?.publicKeys)) diff.push('publicKeys');
    if (!sameLogin(next, prev)) diff.push('lastLogin');
    if (diff.length) return { rule: 'manager: other field', allowed: false, code: 403, why: `another's ${diff.join(', ')} changed`, accepts: exactly('only changes to workspaces are allowed to workspace managers') };
  }
  return { rule: req.operation === 'CREATE' ? 'manager: create' : 'manager: allowed', allowed: true, ...m };
}

/** §16.4: the owner's UPDATE self-enrols as autoEnroll allows; every CREATE is someone else's edit. */
function e62be9eVerdict(world: OracleWorld, req: OracleRequest, next: Tenant['spec'], prev: Tenant['spec'] | undefined, m: ReturnType<typeof expectedMutation>): Verdict {
  const names = [...new Set([...(next.workspaces ?? []), ...(prev?.workspaces ?? [])].map((w) => w.name))].sort();
  const changed = names.filter((ws) => roleIn(next.workspaces, ws) !== roleIn(prev?.workspaces, ws));
  if (req.username === req.object.metadata.name && req.operation === 'UPDATE') {
    const at = loginAt(next);
    if (at !== undefined && Math.abs(at - world.now) > DAY) {
      return { rule: 'owner: lastLogin', allowed: false, code: 403, why: 'own lastLogin present and out of range', accepts: (s) => s.startsWith('unacceptable last login time, must be within +/-24h0m0s since local server time') };
    }
    const diff = otherDifferences(next, prev);
    if (diff.length) return { rule: 'owner: other field', allowed: false, code: 403, why: `own ${diff.join(', ')} changed`, accepts: exactly('unexpected tenant spec change, only lastLogin and self-enrolling workspaces are allowed to change') };
    for (const ws of changed) {
      if (!world.workspaces?.has(ws)) return { rule: 'owner: workspace unreadable', allowed: false, code: 500, why: `${ws} cannot be read`, accepts: (s) => s.startsWith(`failed to check workspace changes: failed to fetch workspace ${ws}`) };
      const autoEnroll = world.workspaces.get(ws);
      const own = autoEnroll === 'immediate' ? 'user' : autoEnroll === 'withApproval' ? 'candidate' : undefined;
      const role = roleIn(next.workspaces, ws);
      if (!own || (role !== undefined && role !== own)) return { rule: 'owner: workspaces', allowed: false, code: 403, why: `own enrolment in ${ws} (autoEnroll ${autoEnroll}) as ${role}`, accepts: exactly('you are not allowed to change your own workspaces') };
    }
    return { rule: 'owner: allowed', allowed: true, ...m };
  }
  const requester = world.tenants.get(req.username);
  if (!requester) return { rule: 'no Tenant', allowed: false, code: 400, why: 'requester without a Tenant', accepts: (s) => s.startsWith('could not fetch a tenant for the current user') };
  const unmanaged = changed.filter((ws) => roleIn(requester.spec.workspaces, ws) !== 'manager');
  if (unmanaged.length) {
    const allowedMessages = unmanaged.map((ws) => `you are not a manager for workspace ${ws}, so you cannot change it in the tenant`);
    return { rule: 'not a manager', allowed: false, code: 403, why: `changes in ${unmanaged.join(', ')}, not managed`, accepts: (s) => allowedMessages.includes(s) };
  }
  if (req.operation === 'UPDATE') {
    const diff = otherDifferences(next, prev);
    if (!sameList(next.publicKeys, prev?.publicKeys)) diff.push('publicKeys');
    if (!sameLogin(next, prev)) diff.push('lastLogin');
    if (diff.length) return { rule: 'manager: other field', allowed: false, code: 403, why: `another's ${diff.join(', ')} changed`, accepts: exactly('only changes to workspaces are allowed in the tenant') };
  }
  return { rule: req.operation === 'CREATE' ? 'manager: create' : 'manager: allowed', allowed: true, ...m };
}
