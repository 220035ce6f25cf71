/**
 * The Pods each environment's headless Service selects (docs/behaviour.md §16.3), listed only when
 * they can have changed. Pods are not watched; the workload that owns them (the Deployment, or the
 * VMI of a virt-launcher Pod) changes its status whenever one of them is created, deleted or turns
 * ready, and that change is what brings the reconcile. So each environment's list is kept with its
 * workload's uid and resourceVersion and taken again only when they change; a workload that has
 * no Pod yet, or none at all, costs no request.
 */
import type { PodState } from '../model/phase.ts';

/** What of the workload tells whether its Pods can have changed. */
export interface WorkloadState {
  metadata?: { uid?: string; resourceVersion?: string };
  status?: { replicas?: number; phase?: string };
}

interface Entry {
  version: string;
  pods: PodState[];
}

export class HeadlessPods {
  /** By Instance key (`<namespace>/<name>`), then environment child name. */
  private readonly byInstance = new Map<string, Map<string, Entry>>();

  /**
   * The Pods of an Instance's environment (its children's name), from `list` when `workload` moved
   * since the last list. `workload` absent, a Deployment reporting no replicas or a VMI not yet
   * scheduled: no live Pod can be there, so none, without a request.
   */
  async pods(instance: string, environment: string, workload: WorkloadState | undefined, list: () => Promise<PodState[]>): Promise<PodState[]> {
    const envs = this.byInstance.get(instance);
    if (!workload || !hasPods(workload)) {
      envs?.delete(environment);
      if (envs?.size === 0) this.byInstance.delete(instance);
      return [];
    }
    const version = `${workload.metadata?.uid}/${workload.metadata?.resourceVersion}`;
    const kept = envs?.get(environment);
    if (kept?.version === version) return kept.pods;
    const pods = (await list()).map(trimmed);
    if (envs) envs.set(environment, { version, pods });
    else this.byInstance.set(instance, new Map([[environment, { version, pods }]]));
    return pods;
  }

  /** Drops what is kept for a deleted Instance. */
  forget(instance: string): void {
    this.byInstance.delete(instance);
  }

  /** Instances with a list kept. */
  get size(): number {
    return this.byInstance.size;
  }
}

function hasPods(w: WorkloadState): boolean {
  if (w.status?.replicas !== undefined) return w.status.replicas > 0;
  // A VMI: its virt-launcher Pod exists from scheduling on (KubeVirt's phases before: "", Pending).
  return w.status?.phase !== undefined && w.status.phase !== '' && w.status.phase !== 'Pending';
}

/** Only what the status reads of a Pod (src/model/phase.ts PodState): a kept list stays small. */
function trimmed(p: PodState): PodState {
  return {
    metadata: { labels: p.metadata?.labels, creationTimestamp: p.metadata?.creationTimestamp, deletionTimestamp: p.metadata?.deletionTimestamp },
    spec: { nodeName: p.spec?.nodeName, nodeSelector: p.spec?.nodeSelector },
    status: { phase: p.status?.phase, podIP: p.status?.podIP },
  };
}
