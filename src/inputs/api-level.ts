/**
 * The two CrownLabs APIs this product reads and writes (docs/behaviour.md §16). Upstream kept the
 * groups and versions and changed the schemas in place, so a level is a set of CRD schemas, not
 * an apiVersion: `2e8aeb9` (July 2023, imports/crds/) and `e62be9e` (August 2026,
 * imports/crds/e62be9e/). One run reads and writes one level. This module holds what differs
 * between the levels as data; the modules that read or write a field that differs cite it.
 */
import { join } from 'node:path';
import { crdsDir } from '../paths.ts';

export const API_LEVELS = ['2e8aeb9', 'e62be9e'] as const;
export type ApiLevel = (typeof API_LEVELS)[number];

export const DEFAULT_API_LEVEL: ApiLevel = '2e8aeb9';

/** The folder holding a level's CrownLabs CRDs. */
export function crownlabsCrdsDir(level: ApiLevel): string {
  return level === '2e8aeb9' ? crdsDir() : join(crdsDir(), level);
}

/** Kinds that exist at some levels only. */
export const LEVEL_ONLY_KINDS: Readonly<Record<string, readonly ApiLevel[]>> = {
  SharedVolume: ['e62be9e'],
};

export function kindExistsAt(kind: string, level: ApiLevel): boolean {
  return LEVEL_ONLY_KINDS[kind]?.includes(level) ?? true;
}

/** Admission webhooks that exist at some levels only (docs/webhooks.md). */
export const LEVEL_ONLY_WEBHOOKS: Readonly<Record<'instance-quota', readonly ApiLevel[]>> = {
  'instance-quota': ['e62be9e'],
};

export function webhookExistsAt(webhook: keyof typeof LEVEL_ONLY_WEBHOOKS, level: ApiLevel): boolean {
  return LEVEL_ONLY_WEBHOOKS[webhook].includes(level);
}

export function isApiLevel(v: unknown): v is ApiLevel {
  return typeof v === 'string' && (API_LEVELS as readonly string[]).includes(v);
}

/**
 * How installed CRDs tell their level: each CRD below has, at `e62be9e`, a field its `2e8aeb9`
 * schema lacks (a path of property names from the version's openAPIV3Schema). Read by the
 * controller from the live CRDs (src/controller/api-level-watch.ts).
 */
export const LEVEL_MARKS: readonly { crd: string; path: readonly string[]; present: ApiLevel; absent: ApiLevel }[] = [
  { crd: 'templates.crownlabs.polito.it', path: ['spec', 'cleanup'], present: 'e62be9e', absent: '2e8aeb9' },
  { crd: 'instances.crownlabs.polito.it', path: ['spec', 'contentUrls'], present: 'e62be9e', absent: '2e8aeb9' },
  { crd: 'tenants.crownlabs.polito.it', path: ['spec', 'personalWorkspace'], present: 'e62be9e', absent: '2e8aeb9' },
  { crd: 'workspaces.crownlabs.polito.it', path: ['spec', 'autoEnroll'], present: 'e62be9e', absent: '2e8aeb9' },
  { crd: 'imagelists.crownlabs.polito.it', path: ['spec', 'projectBaseName'], present: 'e62be9e', absent: '2e8aeb9' },
];

/** What `levelOfCrds` reads of a CustomResourceDefinition. */
export interface CrdLike {
  metadata: { name: string };
  spec?: { versions?: readonly { name?: string; storage?: boolean; schema?: { openAPIV3Schema?: unknown } }[] };
}

/** A CRD of `LEVEL_MARKS` and the level its schema shows. */
export interface CrdLevel {
  crd: string;
  level: ApiLevel;
}

/**
 * The level of a cluster's CrownLabs CRDs: `level` when every CRD of `LEVEL_MARKS` is installed and
 * shows the same one; `mixed` (each CRD and its level) when they disagree; `missing` when some are
 * not installed. A CRD's level is read from its storage version's schema.
 */
export type CrdsLevel = { kind: 'level'; level: ApiLevel; crds: CrdLevel[] } | { kind: 'mixed'; crds: CrdLevel[] } | { kind: 'missing'; missing: string[]; crds: CrdLevel[] };

export function levelOfCrds(crds: readonly CrdLike[]): CrdsLevel {
  const byName = new Map(crds.map((c) => [c.metadata.name, c]));
  const found: CrdLevel[] = [];
  const missing: string[] = [];
  for (const mark of LEVEL_MARKS) {
    const crd = byName.get(mark.crd);
    const versions = crd?.spec?.versions ?? [];
    const storage = versions.find((v) => v.storage) ?? versions[0];
    if (!crd || !storage) {
      missing.push(mark.crd);
      continue;
    }
    found.push({ crd: mark.crd, level: hasSchemaPath(storage.schema?.openAPIV3Schema, mark.path) ? mark.present : mark.absent });
  }
  if (missing.length) return { kind: 'missing', missing, crds: found };
  const levels = new Set(found.map((f) => f.level));
  return levels.size === 1 ? { kind: 'level', level: found[0].level, crds: found } : { kind: 'mixed', crds: found };
}

/** One line saying why CRDs give no level (undefined when they give one). */
export function crdsLevelProblem(result: CrdsLevel): string | undefined {
  const each = result.crds.map((c) => `${c.crd} at ${c.level}`).join(', ');
  if (result.kind === 'mixed') return `the installed CrownLabs CRDs mix API levels: ${each}`;
  if (result.kind === 'missing') return `CrownLabs CRDs not installed: ${result.missing.join(', ')}${each ? ` (installed: ${each})` : ''}`;
  return undefined;
}

function hasSchemaPath(schema: unknown, path: readonly string[]): boolean {
  let node = schema;
  for (const key of path) {
    const props = (node as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (!props || !(key in props)) return false;
    node = props[key];
  }
  return true;
}

/**
 * On an Instance: the API level whose rendering its children keep. `crownlabs migrate` writes
 * `2e8aeb9` on the Instances it moves, whose children exist under 2e8aeb9's names, selectors and
 * Services (immutable, or restarting the workload when changed), so that the lab's move restarts
 * nothing (docs/behaviour.md §16.3, §16.5).
 * New Instances are rendered at the inputs' level; src/model/level-rendering.ts holds the renderings.
 */
export const CHILDREN_LEVEL_ANNOTATION = 'composer.crownlabs.polito.it/children-level';

/** The level an Instance's children are rendered at, or a message when the annotation names none. */
export function childrenLevel(instance: { metadata: { annotations?: Record<string, string> } }, level: ApiLevel): ApiLevel | { problem: string } {
  const value = instance.metadata.annotations?.[CHILDREN_LEVEL_ANNOTATION];
  if (value === undefined) return level;
  if (isApiLevel(value)) return value;
  return { problem: `annotation ${CHILDREN_LEVEL_ANNOTATION}: ${JSON.stringify(value)} is not an API level (${API_LEVELS.join(', ')})` };
}
