import type { ApiLevel } from '../inputs/api-level.ts';
import type { InstancePhase } from '../inputs/types.ts';

/** The parts of live objects the phase mapping reads (docs/behaviour.md §7.4, §7.5). */
export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface VirtualMachineState {
  status?: { printableStatus?: string; ready?: boolean };
}

export interface VirtualMachineInstanceState {
  metadata?: { deletionTimestamp?: string };
  spec?: { nodeSelector?: Record<string, string> };
  status?: { phase?: string; conditions?: Condition[]; nodeName?: string };
}

export interface DeploymentState {
  metadata?: { deletionTimestamp?: string };
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; conditions?: Condition[] };
}

/** A VMI that could not be created because the namespace quota is exhausted. */
function vmiQuotaExceeded(vmi: VirtualMachineInstanceState | undefined): boolean {
  return (vmi?.status?.conditions ?? []).some(
    (c) => c.type === 'Synchronized' && c.status === 'False' && c.reason === 'FailedCreate' && (c.message ?? '').includes('exceeded quota'),
  );
}

/** Phase of a persistent VM from `vm.status.printableStatus` (docs/behaviour.md §7.4 table). */
export function virtualMachinePhase(vm: VirtualMachineState | undefined, vmi: VirtualMachineInstanceState | undefined): InstancePhase {
  switch (vm?.status?.printableStatus) {
    case 'Starting':
      return vmiQuotaExceeded(vmi) ? 'ResourceQuotaExceeded' : 'Starting';
    case 'Provisioning':
      return 'Importing';
    case 'Stopping':
    case 'Terminating':
      return 'Stopping';
    case 'Stopped':
      return 'Off';
    case 'Running':
      return vm.status.ready ? 'Ready' : 'Running';
    default:
      return '';
  }
}

/** Phase of an ephemeral VM from its VMI (docs/behaviour.md §7.4); a stopped one has no VMI and is `Off`. */
export function virtualMachineInstancePhase(vmi: VirtualMachineInstanceState | undefined, running: boolean): InstancePhase {
  if (!running) return 'Off';
  if (!vmi) return '';
  if (vmi.metadata?.deletionTimestamp) return 'Stopping';
  switch (vmi.status?.phase) {
    case 'Pending':
      return vmiQuotaExceeded(vmi) ? 'ResourceQuotaExceeded' : 'Starting';
    case 'Scheduling':
    case 'Scheduled':
      return 'Starting';
    case 'Unknown':
    case 'Failed':
    case 'Succeeded':
      return 'Failed';
    case 'Running':
      return (vmi.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True') ? 'Ready' : 'Running';
    default:
      return '';
  }
}

/** Phase of a Container/Standalone environment from its Deployment (docs/behaviour.md §7.5). */
export function deploymentPhase(dep: DeploymentState | undefined, running: boolean, persistent: boolean): InstancePhase {
  let phase: InstancePhase;
  if (!dep) phase = '';
  else if (dep.metadata?.deletionTimestamp) phase = 'Stopping';
  else if ((dep.spec?.replicas ?? 1) === 0) phase = 'Off';
  else if (dep.spec?.replicas === (dep.status?.readyReplicas ?? 0)) phase = 'Ready';
  else if (
    (dep.status?.conditions ?? []).some(
      (c) => c.type === 'ReplicaFailure' && c.status === 'True' && c.reason === 'FailedCreate' && (c.message ?? '').includes('exceeded quota'),
    )
  )
    phase = 'ResourceQuotaExceeded';
  else phase = 'Starting';
  return !running && !persistent ? 'Off' : phase;
}

const PHASE_ORDER: InstancePhase[] = ['CreationLoopBackoff', 'Failed', 'ResourceQuotaExceeded', 'Importing', 'Stopping', 'Starting', '', 'Running', 'Off', 'Ready'];

/**
 * One phase for an Instance with several environments (2e8aeb9, Decision 4): the least advanced
 * one wins, so `Ready` means every environment is ready. With one environment it is that environment's phase.
 */
export function aggregatePhase(phases: readonly InstancePhase[]): InstancePhase {
  if (phases.length === 0) return '';
  if (phases.every((p) => p === 'Off')) return 'Off';
  const active = phases.filter((p) => p !== 'Off');
  return active.reduce((worst, p) => (PHASE_ORDER.indexOf(p) < PHASE_ORDER.indexOf(worst) ? p : worst), active[0]);
}

/**
 * The Instance's phase from its environments' as e62be9e's controller derives it: any `Failed` or
 * `CreationLoopBackoff` → `Failed`; else any `ResourceQuotaExceeded`; else every one `Ready` →
 * `Ready`; else any `Ready` or `Running` → `Running`; else any `Starting` or `Importing` →
 * `Starting`; else any `Stopping`; else every one `Off` → `Off`; else unset. An unset environment
 * counts towards none of these, so it keeps the Instance from `Ready` and `Off`.
 */
export function instancePhaseOfEnvironments(phases: readonly InstancePhase[]): InstancePhase {
  const some = (...of: InstancePhase[]) => phases.some((p) => of.includes(p));
  const every = (of: InstancePhase) => phases.length > 0 && phases.every((p) => p === of);
  if (some('Failed', 'CreationLoopBackoff')) return 'Failed';
  if (some('ResourceQuotaExceeded')) return 'ResourceQuotaExceeded';
  if (every('Ready')) return 'Ready';
  if (some('Ready', 'Running')) return 'Running';
  if (some('Starting', 'Importing')) return 'Starting';
  if (some('Stopping')) return 'Stopping';
  if (every('Off')) return 'Off';
  return '';
}

/** A persistent VM's phase at e62be9e: as at 2e8aeb9, and a VM waiting for its volume binding is `Importing`. */
function virtualMachinePhaseE62be9e(vm: VirtualMachineState | undefined, vmi: VirtualMachineInstanceState | undefined): InstancePhase {
  return vm?.status?.printableStatus === 'WaitingForVolumeBinding' ? 'Importing' : virtualMachinePhase(vm, vmi);
}

/** What differs per API level in deriving phases (docs/behaviour.md §16.2); the rest is the same at both. */
export interface PhaseRules {
  /** A persistent VM environment's phase. */
  virtualMachine(vm: VirtualMachineState | undefined, vmi: VirtualMachineInstanceState | undefined): InstancePhase;
  /** The Instance's phase from its environments'. */
  instance(phases: readonly InstancePhase[]): InstancePhase;
}

export const PHASE_RULES: Readonly<Record<ApiLevel, PhaseRules>> = {
  '2e8aeb9': { virtualMachine: virtualMachinePhase, instance: aggregatePhase },
  e62be9e: { virtualMachine: virtualMachinePhaseE62be9e, instance: instancePhaseOfEnvironments },
};

export interface ServiceState {
  spec?: { clusterIP?: string; selector?: Record<string, string> };
}

export interface PodState {
  metadata?: { labels?: Record<string, string>; creationTimestamp?: string; deletionTimestamp?: string };
  spec?: { nodeName?: string; nodeSelector?: Record<string, string> };
  status?: { phase?: string; podIP?: string };
}

/**
 * An environment's IP from its Service: the `clusterIP`, or for a headless Service (`None`) the IP
 * of the newest Pod it selects that is not being deleted, not finished (`Failed`, `Succeeded`) and
 * has an IP; `""` when there is none. An empty selector would match any Pod, so it gives `""`.
 * `pods` are those of the Service's namespace.
 */
export function environmentIp(service: ServiceState | undefined, pods: readonly PodState[]): string {
  const clusterIP = service?.spec?.clusterIP ?? '';
  if (clusterIP !== 'None') return clusterIP;
  return newestLivePod(service?.spec?.selector, pods, (p) => !!p.status?.podIP)?.status?.podIP ?? '';
}

/**
 * The newest of `pods` that `selector` matches, not being deleted, not finished (`Failed`,
 * `Succeeded`) and `usable`. An empty or absent selector matches none (it would match any Pod).
 */
function newestLivePod(selector: Record<string, string> | undefined, pods: readonly PodState[], usable: (p: PodState) => boolean): PodState | undefined {
  const wanted = Object.entries(selector ?? {});
  if (wanted.length === 0) return undefined;
  const created = (p: PodState) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  let newest: PodState | undefined;
  for (const pod of pods) {
    if (!wanted.every(([k, v]) => pod.metadata?.labels?.[k] === v)) continue;
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || !usable(pod)) continue;
    if (!newest || created(pod) > created(newest)) newest = pod;
  }
  return newest;
}

/** Where an environment's workload runs: its node, and the node labels it was scheduled by (none when empty). */
export interface Placement {
  nodeName: string;
  nodeSelector?: Record<string, string>;
}

/** KubeVirt adds this label to every virt-launcher Pod's nodeSelector; it is not one of the Instance's. */
const KUBEVIRT_SCHEDULABLE = 'kubevirt.io/schedulable';

function placement(nodeName: string | undefined, nodeSelector: Record<string, string> | undefined): Placement | undefined {
  if (!nodeName) return undefined;
  const labels = Object.entries(nodeSelector ?? {}).filter(([k]) => k !== KUBEVIRT_SCHEDULABLE);
  return labels.length ? { nodeName, nodeSelector: Object.fromEntries(labels) } : { nodeName };
}

/** A VM environment's placement, from its VMI (KubeVirt reports the node in `status.nodeName`). */
export function vmiPlacement(vmi: VirtualMachineInstanceState | undefined): Placement | undefined {
  return placement(vmi?.status?.nodeName, vmi?.spec?.nodeSelector);
}

/** A Container/Standalone environment's placement, from the newest live scheduled Pod its Service selects. */
export function podPlacement(service: ServiceState | undefined, pods: readonly PodState[]): Placement | undefined {
  const pod = newestLivePod(service?.spec?.selector, pods, (p) => !!p.spec?.nodeName);
  return placement(pod?.spec?.nodeName, pod?.spec?.nodeSelector);
}

/**
 * The Instance's `nodeName` and `nodeSelector` (e62be9e's status), as upstream writes them: both
 * removed while the Instance is not running; else those of the first environment (Template order)
 * placed on a node; kept as they are while none is. Keys follow `writeStatus`: undefined removes,
 * absent keeps.
 */
export function instancePlacement(running: boolean, placements: readonly (Placement | undefined)[]): { nodeName?: string; nodeSelector?: Record<string, string> } {
  if (!running) return { nodeName: undefined, nodeSelector: undefined };
  const first = placements.find((p) => p !== undefined);
  return first ? { nodeName: first.nodeName, nodeSelector: first.nodeSelector } : {};
}
