/**
 * The status the controller writes, in the shape of the API level (docs/behaviour.md §16.2): the
 * reconcilers compute one internal status per kind, and this table turns it into what the level's
 * CRD holds, and the CRD's status back into what the reconcilers read. Workspace status is the same
 * at both levels and needs no entry.
 *
 * Values follow `writeStatus`: a key given as undefined is removed, a key not given is left as it is.
 */
import type { ApiLevel } from '../inputs/api-level.ts';
import type { EnvironmentStatus, InstanceAutomationStatus, InstancePhase, NameCreated, TenantStatus } from '../inputs/types.ts';

/** What the Instance reconcilers compute or read: the Instance-wide fields and, per environment, its phase and IP. */
export interface InstanceStatusFacts {
  phase?: InstancePhase;
  url?: string;
  /** The first environment's Service IP. */
  ip?: string;
  /** Creation to the first Ready of the whole Instance, a Go duration. */
  initialReadyTime?: string;
  automation?: InstanceAutomationStatus;
  environments?: { name: string; phase: InstancePhase; ip?: string }[];
}

/** What the Tenant reconciler computes: the 2e8aeb9 fields and those e62be9e added. */
export type TenantStatusFacts = Omit<TenantStatus, 'keycloak' | 'personalWorkspaceCreated'> & {
  keycloak: { userCreated: NameCreated; userConfirmed: boolean; userSynchronized: boolean };
  personalWorkspaceCreated: boolean;
};

type Wire = Record<string, unknown>;

interface Shape {
  /** The status to send for `desired`, given the status the object holds (`current`). */
  instance(desired: InstanceStatusFacts, current: unknown): Wire;
  tenant(desired: TenantStatusFacts): Wire;
}

const SHAPES: Record<ApiLevel, Shape> = {
  // 2e8aeb9: everything top-level, one IP; no per-environment list, no Keycloak or personal workspace.
  '2e8aeb9': {
    instance: (desired) => without(desired, ['environments']),
    tenant: (desired) => without(desired, ['keycloak', 'personalWorkspaceCreated']),
  },
  // e62be9e: phase and url top-level, the rest per environment; Tenant status has no quota.
  e62be9e: {
    instance: environmentsShape,
    tenant: (desired) => without(desired, ['quota']),
  },
};

export function instanceWireStatus(level: ApiLevel, desired: InstanceStatusFacts, current: unknown): Wire {
  return SHAPES[level].instance(desired, current);
}

export function tenantWireStatus(level: ApiLevel, desired: TenantStatusFacts): Wire {
  return SHAPES[level].tenant(desired);
}

/**
 * An Instance's status as the reconcilers read it, at either level: a level's CRD holds one of the
 * two shapes only, so the fields are read from whichever is there (the first environment's).
 */
export function instanceStatusFacts(wire: unknown): InstanceStatusFacts {
  const s = (isObject(wire) ? wire : {}) as Wire & { environments?: EnvironmentStatus[] };
  const first = Array.isArray(s.environments) ? s.environments[0] : undefined;
  const from = (first ?? s) as { ip?: string; initialReadyTime?: string; automation?: InstanceAutomationStatus };
  const out: InstanceStatusFacts = {};
  if (typeof s.phase === 'string') out.phase = s.phase as InstancePhase;
  if (typeof s.url === 'string') out.url = s.url;
  if (from.ip) out.ip = from.ip;
  if (from.initialReadyTime) out.initialReadyTime = from.initialReadyTime;
  if (from.automation) out.automation = from.automation;
  if (Array.isArray(s.environments)) out.environments = s.environments.map((e) => ({ name: e.name, phase: e.phase ?? '', ...(e.ip ? { ip: e.ip } : {}) }));
  return out;
}

/**
 * e62be9e: one entry per environment (`environments` is replaced whole by a merge patch, so each
 * entry starts from the one the object holds). The Instance-wide `initialReadyTime` and
 * `automation` go on every environment; an update that names no environments (the automation's)
 * updates the entries there are.
 */
function environmentsShape(desired: InstanceStatusFacts, current: unknown): Wire {
  const out: Wire = {};
  if ('phase' in desired) out.phase = desired.phase;
  if ('url' in desired) out.url = desired.url;
  const perEnvironment = desired.environments !== undefined || 'initialReadyTime' in desired || 'automation' in desired;
  if (!perEnvironment) return out;
  const held = ((isObject(current) && Array.isArray(current.environments) ? current.environments : []) as EnvironmentStatus[]).filter((e) => isObject(e) && typeof e.name === 'string');
  const names = desired.environments?.map((e) => e.name) ?? held.map((e) => e.name);
  out.environments = names.map((name) => {
    const entry: Wire = { ...(held.find((e) => e.name === name) ?? { name }) };
    const env = desired.environments?.find((e) => e.name === name);
    if (env) {
      set(entry, 'phase', env.phase || undefined);
      set(entry, 'ip', env.ip || undefined);
    }
    if ('initialReadyTime' in desired) set(entry, 'initialReadyTime', desired.initialReadyTime);
    if ('automation' in desired) {
      const merged: Wire = { ...(isObject(entry.automation) ? entry.automation : {}) };
      for (const [k, v] of Object.entries(desired.automation ?? {})) set(merged, k, v);
      set(entry, 'automation', desired.automation === undefined || Object.keys(merged).length === 0 ? undefined : merged);
    }
    return entry;
  });
  return out;
}

/** Sets a key, or deletes it for undefined (entries of a list are sent as they are: no undefined in them). */
function set(o: Wire, key: string, value: unknown): void {
  if (value === undefined || value === null) delete o[key];
  else o[key] = value;
}

function without<T extends object>(o: T, keys: readonly string[]): Wire {
  const out: Wire = {};
  for (const [k, v] of Object.entries(o)) if (!keys.includes(k)) out[k] = v;
  return out;
}

function isObject(v: unknown): v is Wire {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
