/**
 * Which of two resource sets that render the same object keeps it (docs/behaviour.md §0.4): the
 * sets an administrator's resources make (Workspace, Tenant) take precedence over the ones a
 * tenant or a workspace manager makes (Instance, InstanceSnapshot, SharedVolume). An Instance named like an object of its
 * Tenant's set (`mydrive-info`) therefore never blocks the Tenant's set: it is the one refused.
 * Between sets of one rank, the one already there (controller) or first in order (files) keeps it.
 */
import type { ParentKind } from './labels.ts';

const RANK: Record<ParentKind, number> = { Platform: 3, Bastion: 3, Workspace: 2, Tenant: 2, Instance: 1, InstanceSnapshot: 1, SharedVolume: 1 };

/** Whether a set of kind `a` takes an object from a set of kind `b`. */
export function outranks(a: string, b: string): boolean {
  return (RANK[a as ParentKind] ?? 0) > (RANK[b as ParentKind] ?? 0);
}
