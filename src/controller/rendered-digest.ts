/**
 * The digest of what the controller last applied to an object, kept on it as an annotation. The
 * subset check (live-compare.ts) finds hand edits of fields we render, but not a field we stopped
 * rendering: the live object still holds everything we render, so the apply that would drop the
 * field (server-side apply removes fields its manager no longer sends) was skipped. With the
 * digest among the rendered fields, a change of what we render fails the subset check too.
 *
 * Only the controller writes it: synth and gitops output do not carry it (Argo CD prunes fields by
 * its own last-applied state). A live object without it (made by the Go operators or an older
 * version) is applied once; that write changes metadata only when nothing else differs, which
 * bumps no generation and restarts nothing.
 */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../inputs/types.ts';

export const RENDERED_DIGEST_ANNOTATION = 'composer.crownlabs.polito.it/rendered-digest';

/** SHA-256 of the object's JSON with object keys sorted (the digest annotation itself left out). */
export function renderedDigest(obj: KubeObject): string {
  const annotations = { ...obj.metadata.annotations };
  delete annotations[RENDERED_DIGEST_ANNOTATION];
  const bare = { ...obj, metadata: { ...obj.metadata, annotations } };
  const json = JSON.stringify(bare, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as Record<string, unknown>)[k]])) : v));
  return `sha256:${createHash('sha256').update(json).digest('base64')}`;
}

/** The objects with their digest annotation, as the controller applies them. */
export function withRenderedDigest(objects: readonly KubeObject[]): KubeObject[] {
  return objects.map((o) => ({ ...o, metadata: { ...o.metadata, annotations: { ...o.metadata.annotations, [RENDERED_DIGEST_ANNOTATION]: renderedDigest(o) } } }));
}
