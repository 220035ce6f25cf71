/**
 * What the child cache keeps of a Secret (docs/behaviour.md §0.8): its metadata and type, and for
 * each data key a digest of the value instead of the value. The controller reads no rendered
 * Secret's data, it only compares it with what it renders (live-compare.ts), which a digest of
 * the bytes answers as well; a cached Secret is then a few hundred bytes whatever its size.
 */
import { createHash } from 'node:crypto';
import type { CachedObject } from '../kube/informer.ts';

/** The field of a cached Secret holding `data`'s digests (no Secret field has that name). */
export const DATA_DIGESTS = 'dataDigests';

export function digestBytes(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('base64')}`;
}

/** Digest of every key of a Secret's base64 `data` (and of a rendered `stringData`, as UTF-8 bytes). */
export function secretDigests(data: Record<string, unknown> | undefined, stringData?: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data ?? {})) out[k] = digestBytes(Buffer.from(String(v), 'base64'));
  for (const [k, v] of Object.entries(stringData ?? {})) out[k] = digestBytes(Buffer.from(String(v), 'utf8'));
  return out;
}

/** The cached form of a Secret: `data` (and a `stringData` no server returns) replaced by their digests. */
export function secretDigestProjection(secret: CachedObject): CachedObject {
  const { data, stringData, ...rest } = secret as CachedObject & { data?: Record<string, unknown>; stringData?: Record<string, unknown> };
  return { ...rest, [DATA_DIGESTS]: secretDigests(data, stringData) };
}

/** A cached Secret as a Secret again, for display: its keys in `data`, each holding its digest (masked when printed). */
export function secretWithDigestsAsData<T extends Record<string, unknown>>(obj: T): T {
  if (obj.kind !== 'Secret' || obj[DATA_DIGESTS] === undefined) return obj;
  const { [DATA_DIGESTS]: digests, ...rest } = obj;
  return { ...rest, data: digests } as unknown as T;
}
