/**
 * CrownLabs resources of API level `2e8aeb9` rewritten into `e62be9e` shape (docs/behaviour.md
 * §16.5): pure, object → object plus what moved and what could not be carried. The input objects
 * are as validated at 2e8aeb9 (CRD defaults applied, as the API server stores them), so a file and
 * the same object read from the cluster give the same result. Nothing here reads or writes.
 */
import { parseQuantity } from '../inputs/quantity.ts';
import type { Problem } from '../inputs/problems.ts';
import { objectKey, TEMPLATE_REF, type KubeObject } from '../inputs/types.ts';
import { CHILDREN_LEVEL_ANNOTATION } from '../inputs/api-level.ts';

/** One field's fate: moved (`from` → `to`), removed (`from` only), added (`to` only) or changed in place (both equal). */
export interface FieldMove {
  from?: string;
  to?: string;
  /** Why, when the value is not carried as it was. */
  note?: string;
}

export interface ObjectMigration {
  /** The input object (not modified). */
  before: KubeObject;
  /** The same object in e62be9e shape. */
  after: KubeObject;
  moves: FieldMove[];
  /** Values not carried (warnings) and objects that cannot exist at e62be9e (errors); with kind, name and field. */
  problems: Problem[];
}

/** e62be9e's pattern of an environment name (4 to 12 characters) and most environments of a Template. */
export const E62BE9E_ENVIRONMENT_NAME = /^[a-z\d][a-z\d-]{2,10}[a-z\d]$/;
export const E62BE9E_MAX_ENVIRONMENTS = 10;

type Obj = Record<string, unknown>;

/**
 * Every object migrated, in input order. Instances look up their Template among `objects` (its
 * first environment's name keys the content URLs and the environment status); kinds that did not
 * change (ImageList, Namespace, Secret, …) come back as they were, with no moves.
 */
export function migrateObjects(objects: readonly KubeObject[]): ObjectMigration[] {
  const templates = new Map<string, KubeObject>();
  for (const o of objects) if (o.kind === 'Template') templates.set(objectKey(o), o);
  return objects.map((o) => migrateObject(o, (key) => templates.get(key)));
}

export function migrateObject(before: KubeObject, template: (key: string) => KubeObject | undefined = () => undefined): ObjectMigration {
  const after = structuredClone(before) as KubeObject;
  const m: ObjectMigration = { before, after, moves: [], problems: [] };
  switch (before.kind) {
    case 'Template':
      migrateTemplate(after, m);
      break;
    case 'Instance':
      migrateInstance(after, m, template);
      break;
    case 'Tenant':
      migrateTenant(after, m);
      break;
    case 'Workspace':
      migrateWorkspace(after, m);
      break;
    case 'InstanceSnapshot':
      migrateSnapshot(after, m);
      break;
  }
  return m;
}

function problem(m: ObjectMigration, severity: Problem['severity'], field: string, message: string): void {
  m.problems.push({ severity, kind: m.before.kind, name: objectKey(m.before), field, message });
}

function migrateTemplate(t: KubeObject, m: ObjectMigration): void {
  const spec = t.spec as Obj;
  if (typeof spec.deleteAfter === 'string') {
    spec.cleanup = { deleteAfterCreation: spec.deleteAfter, stopAfterInactivity: 'never', deleteAfterInactivity: 'never' };
    delete spec.deleteAfter;
    m.moves.push({ from: 'spec.deleteAfter', to: 'spec.cleanup.deleteAfterCreation' });
    m.moves.push({ to: 'spec.cleanup.stopAfterInactivity', note: 'never' }, { to: 'spec.cleanup.deleteAfterInactivity', note: 'never' });
  }
  const envs = (spec.environmentList as Obj[] | undefined) ?? [];
  if (envs.length > E62BE9E_MAX_ENVIRONMENTS) {
    problem(m, 'error', 'spec.environmentList', `${envs.length} environments: e62be9e takes at most ${E62BE9E_MAX_ENVIRONMENTS}; cannot be carried (split the Template)`);
  }
  envs.forEach((env, i) => {
    const at = `spec.environmentList[${i}]`;
    if (typeof env.name === 'string' && !E62BE9E_ENVIRONMENT_NAME.test(env.name)) {
      problem(m, 'error', `${at}.name`, `${JSON.stringify(env.name)} breaks e62be9e's environment name pattern ${E62BE9E_ENVIRONMENT_NAME.source} (4 to 12 lower-case letters, digits and '-'); cannot be carried (rename it: Instances' children are named after it)`);
    }
    belowMinimumMemory((env.resources as Obj | undefined)?.memory, `${at}.resources.memory`, m);
    if ('mode' in env) {
      const mode = env.mode;
      delete env.mode;
      if (mode === 'Standard') m.moves.push({ from: `${at}.mode` });
      else {
        m.moves.push({ from: `${at}.mode`, note: `${String(mode)} not carried` });
        problem(m, 'warning', `${at}.mode`, `${JSON.stringify(mode)} cannot be carried: e62be9e has no mode and every environment behaves as Standard (its host, hostname and Services of §7.3 change)`);
      }
    }
  });
}

function migrateInstance(inst: KubeObject, m: ObjectMigration, template: (key: string) => KubeObject | undefined): void {
  const spec = inst.spec as Obj;
  const ref = spec[TEMPLATE_REF] as { name: string; namespace?: string } | undefined;
  const templateKey = ref ? `${ref.namespace ?? inst.metadata.namespace}/${ref.name}` : undefined;
  const tpl = templateKey ? template(templateKey) : undefined;
  // 2e8aeb9 handles the first environment only (§14.2): its name is what per-environment fields key on.
  const envName = ((tpl?.spec as Obj | undefined)?.environmentList as Obj[] | undefined)?.[0]?.name as string | undefined;
  const notFound = `the Template ${templateKey} is not in the input, so its first environment's name is unknown`;

  const urls = spec.customizationUrls as Obj | undefined;
  if (urls) {
    delete spec.customizationUrls;
    if (typeof urls.statusCheck === 'string') {
      spec.statusCheckUrl = urls.statusCheck;
      m.moves.push({ from: 'spec.customizationUrls.statusCheck', to: 'spec.statusCheckUrl' });
    }
    const content: Obj = {};
    if (typeof urls.contentOrigin === 'string') content.origin = urls.contentOrigin;
    if (typeof urls.contentDestination === 'string') content.destination = urls.contentDestination;
    const moved = Object.keys(content);
    if (moved.length > 0 && envName) {
      spec.contentUrls = { [envName]: content };
      for (const k of moved) m.moves.push({ from: `spec.customizationUrls.content${k === 'origin' ? 'Origin' : 'Destination'}`, to: `spec.contentUrls.${envName}.${k}` });
    } else if (moved.length > 0) {
      for (const k of moved) {
        const from = `spec.customizationUrls.content${k === 'origin' ? 'Origin' : 'Destination'}`;
        m.moves.push({ from, note: 'not carried' });
        problem(m, 'warning', from, `cannot be carried to spec.contentUrls: ${notFound} (migrate it with its Template)`);
      }
    }
  }

  const status = inst.status as Obj | undefined;
  if (status) {
    const env: Obj = {};
    for (const k of ['ip', 'initialReadyTime', 'automation'] as const) {
      if (status[k] === undefined) continue;
      env[k] = status[k];
      delete status[k];
    }
    const keys = Object.keys(env);
    if (keys.length > 0 && envName) {
      status.environments = [{ name: envName, ...(typeof status.phase === 'string' ? { phase: status.phase } : {}), ...env }];
      for (const k of keys) m.moves.push({ from: `status.${k}`, to: `status.environments[0].${k}` });
    } else if (keys.length > 0) {
      for (const k of keys) {
        m.moves.push({ from: `status.${k}`, note: 'not carried' });
        problem(m, 'warning', `status.${k}`, `cannot be carried to status.environments[0]: ${notFound}`);
      }
    }
  }

  // Its children exist under 2e8aeb9's names, selectors and Services: they keep them, or the move
  // would recreate every workload (docs/behaviour.md §16.3, §16.5).
  const annotations = (inst.metadata.annotations ??= {});
  if (annotations[CHILDREN_LEVEL_ANNOTATION] === undefined) {
    annotations[CHILDREN_LEVEL_ANNOTATION] = '2e8aeb9';
    m.moves.push({ to: `metadata.annotations.${CHILDREN_LEVEL_ANNOTATION}`, note: '2e8aeb9: its children keep their names' });
  }
}

function migrateTenant(tenant: KubeObject, m: ObjectMigration): void {
  const spec = tenant.spec as Obj;
  const quota = spec.quota as Obj | undefined;
  if (quota) {
    delete spec.quota;
    const cpu = wholeCores(quota.cpu, 'spec.quota.cpu', m);
    belowMinimumMemory(quota.memory, 'spec.quota.memory', m);
    spec.personalWorkspace = { cpu, memory: quota.memory, instances: quota.instances };
    m.moves.push({ from: 'spec.quota', to: 'spec.personalWorkspace', note: 'meaning differs' });
    problem(
      m,
      'warning',
      'spec.quota',
      "carried as spec.personalWorkspace, whose meaning differs: 2e8aeb9's quota replaced the sum of the Tenant's workspace quotas, e62be9e's personal workspace is added to that sum (so the Tenant may use more, never less) and gives the Tenant a personal workspace",
    );
    if (typeof quota.instances === 'number' && quota.instances < 1) {
      problem(m, 'error', 'spec.quota.instances', `${quota.instances}: a personal workspace takes at least 1 instance; a quota that forbade Instances cannot be carried (remove spec.quota, or give it 1 or more)`);
    }
  }
  if (tenant.status !== undefined) {
    // e62be9e's Tenant status requires keycloak and personalWorkspaceCreated, which only its controller knows.
    delete tenant.status;
    m.moves.push({ from: 'status', note: 'written by the controller' });
  }
}

function migrateWorkspace(ws: KubeObject, m: ObjectMigration): void {
  const quota = (ws.spec as Obj).quota as Obj | undefined;
  if (!quota) return;
  const cores = wholeCores(quota.cpu, 'spec.quota.cpu', m);
  belowMinimumMemory(quota.memory, 'spec.quota.memory', m);
  if (quota.cpu !== cores) {
    quota.cpu = cores;
    m.moves.push({ from: 'spec.quota.cpu', to: 'spec.quota.cpu', note: `${cores} whole cores` });
  }
}

/** e62be9e's InstanceSnapshot phases; at 2e8aeb9 any string. */
const SNAPSHOT_PHASES = new Set(['', 'Pending', 'Processing', 'Completed', 'Failed']);

function migrateSnapshot(snap: KubeObject, m: ObjectMigration): void {
  const phase = (snap.status as Obj | undefined)?.phase;
  if (phase === undefined || SNAPSHOT_PHASES.has(phase as string)) return;
  delete snap.status;
  m.moves.push({ from: 'status', note: 'not carried' });
  problem(m, 'warning', 'status.phase', `${JSON.stringify(phase)} is not one of e62be9e's phases (${[...SNAPSHOT_PHASES].map((p) => JSON.stringify(p)).join(', ')}): the status is left to the controller`);
}

/**
 * A 2e8aeb9 CPU quantity as e62be9e's whole cores: floored, as upstream reads `500m`; at least 1
 * (e62be9e's minimum). A lost fraction is reported at `field`.
 */
function wholeCores(value: unknown, field: string, m: ObjectMigration): number {
  const q = parseQuantity(value as string | number);
  let lo = 0n;
  let hi = 1n;
  while (q.cmp(hi) >= 0) hi *= 2n;
  // lo ≤ q < hi
  while (hi - lo > 1n) {
    const mid = (lo + hi) / 2n;
    if (q.cmp(mid) >= 0) lo = mid;
    else hi = mid;
  }
  const exact = q.cmp(lo) === 0;
  const cores = lo < 1n ? 1n : lo;
  if (!exact) {
    const why = lo < 1n ? `less than one core: carried as 1, e62be9e's minimum` : `floored to ${lo} (the fraction is lost)`;
    problem(m, 'warning', field, `${JSON.stringify(value)}: e62be9e counts CPU in whole cores; ${why}`);
  }
  return Number(cores);
}

/** e62be9e's CRDs require at least 1Gi of memory (a CEL rule, which the offline schema check does not run). */
const MIN_MEMORY = '1Gi';

function belowMinimumMemory(value: unknown, field: string, m: ObjectMigration): void {
  if (value === undefined || parseQuantity(value as string | number).cmp(MIN_MEMORY) >= 0) return;
  problem(m, 'error', field, `${JSON.stringify(value)}: e62be9e's CRD requires at least ${MIN_MEMORY} of memory here; cannot be carried (raise it)`);
}
