/**
 * The digest of what the controller last applied to an object, kept on it as a label. The
 * subset check (live-compare.ts) finds hand edits of fields we render, but not a field we stopped
 * rendering: the live object still holds everything we render, so the apply that would drop the
 * field (server-side apply removes fields its manager no longer sends) was skipped. With the
 * digest among the rendered fields, a change of what we render fails the subset check too.
 *
 * Only the controller writes it: synth and gitops output do not carry it (Argo CD prunes fields by
 * its own last-applied state). A live object without it (made by the Go operators or an older
 * version) is applied once; that write changes metadata only when nothing else differs, which
 * restarts nothing. A label, not an annotation: a Deployment's generation moves with its
 * annotations (they are copied to its ReplicaSets), not with its labels.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../inputs/types.ts';

export const RENDERED_DIGEST_LABEL = 'composer.crownlabs.polito.it/rendered-digest';

/**
 * SHA-256 of the object's JSON with object keys sorted (the digest label itself left out), its
 * first 160 bits in hex: a label value holds at most 63 characters.
 */
export function renderedDigest(obj: KubeObject): string {
  const labels = { ...obj.metadata.labels };
  delete labels[RENDERED_DIGEST_LABEL];
  const bare = { ...obj, metadata: { ...obj.metadata, labels } };
  const json = JSON.stringify(bare, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])) : v));
  return createHash('sha256').update(json).digest('hex').slice(0, 40);
}

/** The objects with their digest label, as the controller applies them. */
export function withRenderedDigest(objects: readonly KubeObject[]): KubeObject[] {
  return objects.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [RENDERED_DIGEST_LABEL]: renderedDigest(o) } } }));
}
