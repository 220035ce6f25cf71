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
import { PHASE_RULES } from './phase.ts';

/** One environment's status, as the reconciler computes it (keys follow `writeStatus`: undefined removes, absent keeps). */
export interface EnvironmentStatusFacts {
  /** The Template's environment name. */
  name: string;
  phase: InstancePhase;
  /** Its Service's IP. */
  ip?: string;
  /** Its GUI is exposed (an Ingress is rendered for it): e62be9e's `expositionAccepted`, Ingresses counting as accepted. */
  expositionAccepted?: boolean;
}

/**
 * What the Instance reconcilers compute or read: the Instance-wide fields and, per environment, its
 * phase and IP. What a level derives from them (the Instance's phase, where `initialReadyTime`
 * goes) is in SHAPES.
 */
export interface InstanceStatusFacts {
  /**
   * The Instance's phase. Without `environments` it is the phase of every environment (a failure
   * written before or instead of looking at them). With `environments`, when not given, each level
   * derives it from theirs (PHASE_RULES); e62be9e always does.
   */
  phase?: InstancePhase;
  url?: string;
  /** The first environment's Service IP (2e8aeb9; derived from `environments` when not given). */
  ip?: string;
  /** Creation to the first Ready of the whole Instance, a Go duration (2e8aeb9; read back from the first environment at e62be9e). */
  initialReadyTime?: string;
  automation?: InstanceAutomationStatus;
  environments?: EnvironmentStatusFacts[];
  /**
   * The Instance's age now, a Go duration of whole seconds: the `initialReadyTime` a level records
   * once, when the Instance (2e8aeb9) or an environment (e62be9e) is first seen Ready.
   */
  age?: string;
  /** The node the Instance's workload runs on, and the node labels it was scheduled by (e62be9e). */
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  /** e62be9e's status.publicExposure (docs/behaviour.md §18); given as undefined: removed (exposure stopped). */
  publicExposure?: PublicExposureStatusFacts;
}

export interface PublicExposureStatusFacts {
  phase: 'Provisioning' | 'Ready' | 'Error';
  message: string;
  /** The address the LoadBalancer implementation reports (never the one asked for). */
  externalIP?: string;
  ports?: { name: string; port: number; targetPort: number; protocol: string }[];
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
  // 2e8aeb9: everything top-level, one IP; no per-environment list, node or Keycloak fields.
  '2e8aeb9': {
    instance: flatShape,
    tenant: (desired) => without(desired, ['keycloak', 'personalWorkspaceCreated']),
  },
  // e62be9e: phase, url and the node top-level, the rest per environment; Tenant status has no quota.
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
 * 2e8aeb9: the Instance-wide fields as given. From `environments`, when not given: the phase by
 * 2e8aeb9's rule, the first environment's IP, and `age` as `initialReadyTime` when the Instance is
 * Ready and holds none yet.
 */
function flatShape(desired: InstanceStatusFacts, current: unknown): Wire {
  const envs = desired.environments;
  const derived: InstanceStatusFacts = {};
  if (envs) derived.phase = PHASE_RULES['2e8aeb9'].instance(envs.map((e) => e.phase)) || undefined;
  const phase = 'phase' in desired ? desired.phase : derived.phase;
  if (envs && (!envs[0] || 'ip' in envs[0])) derived.ip = envs[0]?.ip || undefined;
  const held = isObject(current) && typeof current.initialReadyTime === 'string' && current.initialReadyTime !== '';
  if (phase === 'Ready' && desired.age && !held) derived.initialReadyTime = desired.age;
  const out: Wire = {};
  for (const k of ['phase', 'url', 'ip', 'initialReadyTime', 'automation'] as const) {
    if (k in desired) out[k] = desired[k];
    else if (k in derived) out[k] = derived[k];
  }
  return out;
}

/**
 * e62be9e: one entry per environment (`environments` is replaced whole by a merge patch, so each
 * entry starts from the one the object holds, keeping what others wrote). An entry's
 * `initialReadyTime` is recorded once, when it is first Ready; `automation` goes on every entry.
 * The Instance's phase is derived from the entries by e62be9e's rule. A write that names no
 * environments (a failure's phase, the automation's) updates the entries there are.
 */
function environmentsShape(desired: InstanceStatusFacts, current: unknown): Wire {
  const held = ((isObject(current) && Array.isArray(current.environments) ? current.environments : []) as EnvironmentStatus[]).filter((e) => isObject(e) && typeof e.name === 'string');
  let entries: Wire[] | undefined;
  if (desired.environments !== undefined || 'phase' in desired || 'automation' in desired) {
    const names = desired.environments?.map((e) => e.name) ?? held.map((e) => e.name);
    entries = names.map((name) => {
      const entry: Wire = { ...(held.find((e) => e.name === name) ?? { name }) };
      const env = desired.environments?.find((e) => e.name === name);
      if (env) {
        set(entry, 'phase', env.phase || undefined);
        if ('ip' in env) set(entry, 'ip', env.ip || undefined);
        if ('expositionAccepted' in env) set(entry, 'expositionAccepted', env.expositionAccepted);
      } else if ('phase' in desired) set(entry, 'phase', desired.phase || undefined); // a failure: every entry held
      if (entry.phase === 'Ready' && !entry.initialReadyTime && desired.age) entry.initialReadyTime = desired.age;
      if ('automation' in desired) {
        const merged: Wire = { ...(isObject(entry.automation) ? entry.automation : {}) };
        for (const [k, v] of Object.entries(desired.automation ?? {})) set(merged, k, v);
        set(entry, 'automation', desired.automation === undefined || Object.keys(merged).length === 0 ? undefined : merged);
      }
      return entry;
    });
  }
  const out: Wire = {};
  if (entries && (desired.environments !== undefined || 'phase' in desired)) {
    out.phase = PHASE_RULES.e62be9e.instance(entries.map((e) => (typeof e.phase === 'string' ? (e.phase as InstancePhase) : ''))) || undefined;
  }
  if ('url' in desired) out.url = desired.url;
  // No entries held and none named (a failure or automation write before the first reconcile): no list.
  if (entries && (entries.length > 0 || desired.environments !== undefined)) out.environments = entries;
  if ('nodeName' in desired) out.nodeName = desired.nodeName || undefined;
  if ('nodeSelector' in desired) out.nodeSelector = replacing(desired.nodeSelector, isObject(current) ? current.nodeSelector : undefined);
  if ('publicExposure' in desired) out.publicExposure = replacing(desired.publicExposure as Record<string, unknown> | undefined, isObject(current) ? current.publicExposure : undefined);
  return out;
}

/**
 * A map to write in place of `held`: a merge patch merges maps key by key, so each held key it
 * lacks is given as undefined (removed). Undefined or empty: the map is removed.
 */
function replacing(want: Record<string, unknown> | undefined, held: unknown): Wire | undefined {
  if (!want || Object.keys(want).length === 0) return undefined;
  const out: Wire = {};
  for (const k of Object.keys(isObject(held) ? held : {})) if (!(k in want)) out[k] = undefined;
  return { ...out, ...want };
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
