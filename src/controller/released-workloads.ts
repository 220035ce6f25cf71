/**
 * Under `stoppedEphemeral: release` a stopped ephemeral VM renders no VMI, and the set's prune
 * deletes the one the controller applied. A VMI the Go operators left running when the Instance
 * was stopped (upstream never deletes it) carries none of our labels, so the prune does not see
 * it: these are those VMIs, named as the environment's and controlled by the Instance (its UID),
 * which the Instance reconciler deletes too, and `crownlabs diff` lists as prunes
 * (docs/behaviour.md Decision 9).
 */
import type { Caches } from './caches.ts';
import type { CachedObject } from '../kube/informer.ts';
import type { InstancePlan } from '../model/instance-plan.ts';
import { COMPOSER } from '../model/labels.ts';

export function releasedWorkloads(caches: Pick<Caches, 'child'>, plan: InstancePlan, owner: Pick<CachedObject, 'metadata'>): CachedObject[] {
  const vmis = caches.child('kubevirt.io/v1', 'VirtualMachineInstance');
  const uid = owner.metadata.uid;
  if (!vmis || !uid) return [];
  const out: CachedObject[] = [];
  for (const env of plan.environments) {
    if (!env.isVM || env.persistent || env.workloadRunning) continue;
    const vmi = vmis.get(plan.namespace, env.name);
    if (!vmi || vmi.metadata.deletionTimestamp) continue;
    // Ours is the prune's; only the Instance's own (its controller reference) is released.
    if (vmi.metadata.labels?.[COMPOSER.managedByKey] === COMPOSER.managedByValue) continue;
    if (!(vmi.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === uid)) continue;
    out.push(vmi);
  }
  return out;
}
