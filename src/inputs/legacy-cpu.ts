/**
 * e62be9e's `cpu` of a ResourceSpec (a Workspace's quota, a Tenant's personal workspace) is whole
 * cores, an integer in the CRD schema. Objects stored before that schema change hold a string
 * ("8", "8000m"), which upstream's decoder still reads: an integer string as is, millicores
 * floored to cores, blank as 0 (docs/behaviour.md §16.4). Inputs are read the same way, files and
 * objects from the API server alike, with a warning: the API server refuses the string when the
 * object is created or changed. The one place this is decided.
 */
import type { ApiLevel } from './api-level.ts';

/** Where a ResourceSpec sits in each kind, per level (2e8aeb9's cpu is a quantity: nothing to read). */
const RESOURCE_SPECS: Readonly<Record<ApiLevel, Readonly<Record<string, readonly string[]>>>> = {
  '2e8aeb9': {},
  e62be9e: { Workspace: ['spec', 'quota'], Tenant: ['spec', 'personalWorkspace'] },
};

const INT = /^[+-]?[0-9]+$/;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Whole cores as upstream's decoder reads a string cpu; undefined when it refuses the text. */
export function legacyCpuCores(text: string): number | undefined {
  const t = text.trim();
  if (t === '') return 0;
  const milli = t.endsWith('m');
  const digits = milli ? t.slice(0, -1) : t;
  if (!INT.test(digits)) return undefined;
  // Integer division truncates toward zero, as Go's does.
  const n = milli ? BigInt(digits) / 1000n : BigInt(digits);
  return n > MAX_SAFE || n < -MAX_SAFE ? undefined : Number(n);
}

export interface LegacyCpu {
  /** JSON pointer of the cpu field. */
  pointer: string;
  from: string;
  cores: number;
}

/** Replaces, in place, a string cpu of `value` (a `kind` object at `level`) with its cores; returns what it replaced. */
export function readLegacyCpu(kind: string, value: Record<string, unknown>, level: ApiLevel): LegacyCpu[] {
  const path = RESOURCE_SPECS[level][kind];
  if (!path) return [];
  let at: unknown = value;
  for (const k of path) at = isMap(at) ? at[k] : undefined;
  if (!isMap(at) || typeof at.cpu !== 'string') return [];
  const cores = legacyCpuCores(at.cpu);
  // Text the decoder refuses stays a string: the schema reports it.
  if (cores === undefined) return [];
  const from = at.cpu;
  at.cpu = cores;
  return [{ pointer: `/${path.join('/')}/cpu`, from, cores }];
}

export function legacyCpuWarning(c: LegacyCpu): string {
  const low = c.cores < 1 ? ', under the schema\'s minimum of 1' : '';
  return `cpu ${JSON.stringify(c.from)} is a string: read as ${c.cores} whole cores${low}, as the e62be9e operators read objects stored before cpu became an integer; the API server refuses it when this object is created or changed: write cpu: ${Math.max(c.cores, 1)}`;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
