/**
 * The kinds the controller watches by our managed-by label, compares, conflict-checks and prunes:
 * every kind a resource set can render, derived from the constructs (`renderedKinds`), so a kind
 * a construct starts rendering is watched and pruned without a list to keep by hand; and Jobs,
 * which no set applies but the controller creates once and reads (submitter and snapshot Jobs).
 */
import { renderedKinds } from '../compose/representative-lab.ts';

export interface ChildKind {
  apiVersion: string;
  kind: string;
  /** Its API is a peer's CRD that a cluster may not have (the informer's `optional`). */
  optional?: boolean;
}

/** Groups served only where their CRDs are installed: Gateway API, with exposition ingress, need not be. */
const OPTIONAL_GROUPS: readonly string[] = ['gateway.networking.k8s.io'];

/** Watched beyond what the sets render. */
const CREATED_ONCE: readonly ChildKind[] = [{ apiVersion: 'batch/v1', kind: 'Job' }];

export function childKinds(): readonly ChildKind[] {
  const out: ChildKind[] = renderedKinds().map((k) => (OPTIONAL_GROUPS.includes(k.apiVersion.split('/')[0]) ? { ...k, optional: true } : { ...k }));
  for (const k of CREATED_ONCE) if (!out.some((o) => o.apiVersion === k.apiVersion && o.kind === k.kind)) out.push(k);
  return out;
}
