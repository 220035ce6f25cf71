/**
 * Which live objects the controller may take over when a set renders them (docs/behaviour.md §0.4):
 * the ones CrownLabs made — ours (our managed-by label), or the Go operators' (an owner reference
 * to a CrownLabs resource, a `crownlabs.polito.it/` label or the target label, §0.3, §0.5) —
 * and the ones an administrator marked with `composer.crownlabs.polito.it/adopt: "true"`. Any other
 * object (a namespace `tenant-x` of someone else's) is never adopted: the set that renders it is
 * refused, so it gets no owner reference and is never deleted with the Tenant or Workspace.
 */
import { COMPOSER } from '../model/labels.ts';

export const ADOPT_ANNOTATION = 'composer.crownlabs.polito.it/adopt';
/** The group of CrownLabs' resources and the prefix of its label keys (docs/behaviour.md §0.5). */
const CROWNLABS_PREFIX = 'crownlabs.polito.it/';

interface LiveMeta {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: { apiVersion?: string; kind?: string }[] };
}

/** `targetKey`: the target label's key (`targetLabel`), which upstream puts on its children even when configured outside `crownlabs.polito.it/`. */
export function madeByCrownLabs(live: LiveMeta, targetKey: string): boolean {
  const { labels = {}, ownerReferences = [] } = live.metadata;
  if (labels[COMPOSER.managedByKey] === COMPOSER.managedByValue || targetKey in labels) return true;
  if (Object.keys(labels).some((k) => k.startsWith(CROWNLABS_PREFIX))) return true;
  return ownerReferences.some((r) => (r.apiVersion ?? '').startsWith(CROWNLABS_PREFIX));
}

/** Why a live object may not be taken over, or undefined when it may. */
export function adoptionRefusal(live: LiveMeta, targetKey: string): string | undefined {
  if (madeByCrownLabs(live, targetKey) || live.metadata.annotations?.[ADOPT_ANNOTATION] === 'true') return undefined;
  return (
    'exists and was not created by CrownLabs: not adopted (nothing of this set is applied). ' +
    `Rename the resource, or annotate the object ${ADOPT_ANNOTATION}="true" to adopt it (it is then deleted with its owner)`
  );
}
