/**
 * The ImageList object built from a registry's repositories and tags (docs/behaviour.md §10), pure.
 * Upstream writes images in the order its parallel requests complete and tags in registry order;
 * we sort both so that an unchanged registry gives byte-identical objects (no spurious writes,
 * readable diffs).
 */
import { DEFAULT_API_LEVEL, type ApiLevel } from '../../inputs/api-level.ts';
import type { ImageList, ImageListSpec } from '../../inputs/types.ts';

export const IMAGE_LIST_API_VERSION = 'crownlabs.polito.it/v1alpha1';

export interface RepositoryTags {
  name: string;
  /** As the registry answered; null/undefined counts as no tags (upstream `tags or []`). */
  tags: readonly string[] | null | undefined;
}

/** Upstream drops only the *first* `latest`: a second one (the registry never sends it) stays. */
export function withoutFirstLatest(tags: readonly string[]): string[] {
  const out = [...tags];
  const i = out.indexOf('latest');
  if (i >= 0) out.splice(i, 1);
  return out;
}

/** e62be9e drops every `latest` and repeated tags (docs/behaviour.md §16.3). */
export function withoutLatest(tags: readonly string[]): string[] {
  return [...new Set(tags)].filter((t) => t !== 'latest');
}

/** What the ImageList holds per API level (docs/behaviour.md §10, §16.3). */
export const IMAGE_LIST_LEVEL: Readonly<Record<ApiLevel, { versions: (tags: readonly string[]) => string[]; projectBaseName: boolean }>> = {
  '2e8aeb9': { versions: withoutFirstLatest, projectBaseName: false },
  e62be9e: { versions: withoutLatest, projectBaseName: true },
};

const SEMVER = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Splits into runs of digits and of non-digits (`ubuntu-22.04` → ubuntu-, 22, ., 04). */
function chunks(s: string): string[] {
  return s.match(/\d+|\D+/g) ?? [];
}

function compareNumeric(a: string, b: string): number {
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}

/** Natural order: digit runs compare as numbers (any length), other runs as code units. */
export function compareNatural(a: string, b: string): number {
  const ca = chunks(a);
  const cb = chunks(b);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const x = ca[i];
    const y = cb[i];
    const bothDigits = /^\d/.test(x) && /^\d/.test(y);
    const c = bothDigits ? compareNumeric(x, y) : x < y ? -1 : x > y ? 1 : 0;
    if (c !== 0) return c;
  }
  return ca.length - cb.length;
}

/**
 * Version order: tags that look like versions (`1.2.10`, `v2`, `1.0.0-rc.1`) first, by their
 * numbers and with a pre-release before its release (semver); every other tag after them, in
 * natural order (`20230714t153012` snapshot tags sort by time). Ties end on plain code-unit
 * order, so the order is total and the result deterministic.
 */
export function compareVersions(a: string, b: string): number {
  const ma = SEMVER.exec(a);
  const mb = SEMVER.exec(b);
  if (ma && !mb) return -1;
  if (!ma && mb) return 1;
  let c = 0;
  if (ma && mb) {
    const na = ma[1].split('.');
    const nb = mb[1].split('.');
    for (let i = 0; i < Math.max(na.length, nb.length) && c === 0; i++) c = compareNumeric(na[i] ?? '0', nb[i] ?? '0');
    if (c === 0 && (ma[2] === undefined) !== (mb[2] === undefined)) c = ma[2] === undefined ? 1 : -1;
    if (c === 0 && ma[2] !== undefined && mb[2] !== undefined) c = compareNatural(ma[2], mb[2]);
  } else {
    c = compareNatural(a, b);
  }
  return c !== 0 ? c : a < b ? -1 : a > b ? 1 : 0;
}

/**
 * `{registryName, [projectBaseName], images}`: `latest` removed as the level does it, images without
 * versions dropped, sorted. `projectBaseName` is written at e62be9e only, and only when given.
 */
export function buildImageListSpec(advertisedRegistryName: string, repositories: readonly RepositoryTags[], level: ApiLevel = DEFAULT_API_LEVEL, projectBaseName?: string): ImageListSpec {
  const shape = IMAGE_LIST_LEVEL[level];
  const images = repositories
    .map((r) => ({ name: r.name, versions: shape.versions(r.tags ?? []).sort(compareVersions) }))
    .filter((i) => i.versions.length > 0)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { registryName: advertisedRegistryName, ...(shape.projectBaseName && projectBaseName ? { projectBaseName } : {}), images };
}

/**
 * The object sent by server-side apply: only what we own (name and spec). Labels and annotations
 * others put on the ImageList are left alone, unlike upstream's REPLACE which wiped them.
 */
export function imageListObject(name: string, spec: ImageListSpec): ImageList {
  return { apiVersion: IMAGE_LIST_API_VERSION, kind: 'ImageList', metadata: { name }, spec };
}
