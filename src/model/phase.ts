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
  status?: { phase?: string; conditions?: Condition[] };
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
 * One phase for an Instance with several environments: the least advanced one wins, so `Ready`
 * means every environment is ready. With one environment it is that environment's phase.
 */
export function aggregatePhase(phases: readonly InstancePhase[]): InstancePhase {
  if (phases.length === 0) return '';
  if (phases.every((p) => p === 'Off')) return 'Off';
  const active = phases.filter((p) => p !== 'Off');
  return active.reduce((worst, p) => (PHASE_ORDER.indexOf(p) < PHASE_ORDER.indexOf(worst) ? p : worst), active[0]);
}

export interface ServiceState {
  spec?: { clusterIP?: string; selector?: Record<string, string> };
}

export interface PodState {
  metadata?: { labels?: Record<string, string>; creationTimestamp?: string; deletionTimestamp?: string };
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
  const selector = Object.entries(service?.spec?.selector ?? {});
  if (selector.length === 0) return '';
  const created = (p: PodState) => Date.parse(p.metadata?.creationTimestamp ?? '') || 0;
  let newest: PodState | undefined;
  for (const pod of pods) {
    if (!selector.every(([k, v]) => pod.metadata?.labels?.[k] === v)) continue;
    if (pod.metadata?.deletionTimestamp || pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded' || !pod.status?.podIP) continue;
    if (!newest || created(pod) > created(newest)) newest = pod;
  }
  return newest?.status?.podIP ?? '';
}
