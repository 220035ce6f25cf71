/**
 * InstanceSnapshot rules (docs/behaviour.md §9), pure: the request validation of §9.2 step 2, the names and
 * tag of the image pushed by the Job (§9.3), and the phase a finished Job maps to. The clock is
 * an input (the tag), so that composing a snapshot's Job stays deterministic.
 */
import { goDuration } from './duration.ts';
import { TEMPLATE_REF, TENANT_REF, type Environment, type Instance, type InstanceSnapshot, type Template } from '../inputs/types.ts';

/** `status.phase` values of an InstanceSnapshot (docs/behaviour.md §1.5): free at 2e8aeb9, in e62be9e's enum (§16.3). */
export const SNAPSHOT_PHASES = ['Pending', 'Processing', 'Completed', 'Failed'] as const;
export type SnapshotPhase = (typeof SNAPSHOT_PHASES)[number];

export interface SnapshotEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Events of the snapshot flow, reason and message as upstream emits them (docs/behaviour.md §9.2). */
export const SNAPSHOT_EVENTS = {
  validating: { type: 'Normal', reason: 'Validating', message: 'Start validation of the request' } as SnapshotEvent,
  validationError: (message: string): SnapshotEvent => ({ type: 'Warning', reason: 'ValidationError', message }),
  creation: (snapshotName: string): SnapshotEvent => ({ type: 'Normal', reason: 'Creation', message: `Job ${snapshotName} for snapshot creation started` }),
  created: (imageName: string, duration?: string): SnapshotEvent => ({
    type: 'Normal',
    reason: 'Created',
    message: `Image ${imageName} created and uploaded${duration ? ` in ${duration}` : ''}`,
  }),
  creationFailed: { type: 'Warning', reason: 'CreationFailed', message: 'The creation job failed' } as SnapshotEvent,
} as const;

/** Where the objects a snapshot refers to are read; a thrown error is transient (retry). */
export interface SnapshotLookup {
  instance(namespace: string, name: string): Instance | undefined;
  template(namespace: string, name: string): Template | undefined;
}

export type SnapshotValidation =
  | { ok: true; instance: Instance; template: Template; environment: Environment }
  /** permanent: set phase Failed and do not retry; otherwise retry later. */
  | { ok: false; permanent: boolean; message: string };

/** Snapshots push to a registry: without one configured their Job cannot even be created. */
export function snapshotConfigProblem(config: { vmRegistry: string; vmRegistrySecret: string }): string | undefined {
  const missing = [config.vmRegistry ? '' : 'vmRegistry (--vm-registry)', config.vmRegistrySecret ? '' : 'vmRegistrySecret (--vm-registry-secret)'].filter(Boolean);
  return missing.length ? `snapshots are not configured: set ${missing.join(' and ')}` : undefined;
}

/** The Instance a snapshot names; an empty namespace is the snapshot's own. */
export function snapshotInstanceRef(snapshot: InstanceSnapshot): { namespace: string; name: string } {
  const ref = snapshot.spec.instanceRef;
  return { namespace: ref.namespace || snapshot.metadata.namespace || 'default', name: ref.name };
}

/** The Template an Instance names; an empty namespace is the Instance's own. */
export function instanceTemplateRef(instance: Instance): { namespace: string; name: string } {
  const tref = instance.spec[TEMPLATE_REF];
  return { namespace: tref.namespace || instance.metadata.namespace || 'default', name: tref.name };
}

/**
 * docs/behaviour.md §9.2 step 2. An empty `instanceRef.namespace` means the snapshot's own namespace (upstream
 * would GET with an empty namespace and retry forever); an empty Template namespace means the
 * Instance's.
 */
export function validateSnapshotRequest(snapshot: InstanceSnapshot, lookup: SnapshotLookup): SnapshotValidation {
  const { namespace: instanceNs, name: instanceName } = snapshotInstanceRef(snapshot);
  let instance: Instance | undefined;
  let template: Template | undefined;
  try {
    instance = lookup.instance(instanceNs, instanceName);
    if (!instance) return { ok: false, permanent: true, message: `Instance ${instanceNs}/${instanceName} not found` };
    const tref = instanceTemplateRef(instance);
    template = lookup.template(tref.namespace, tref.name);
    if (!template) return { ok: false, permanent: true, message: `Template ${tref.namespace}/${tref.name} of Instance ${instanceNs}/${instanceName} not found` };
  } catch (err) {
    return { ok: false, permanent: false, message: `lookup failed: ${(err as Error).message}` };
  }
  const envName = snapshot.spec.environmentRef?.name;
  const environment = envName ? template.spec.environmentList.find((e) => e.name === envName) : template.spec.environmentList[0];
  if (!environment) {
    return { ok: false, permanent: true, message: envName ? `environment ${envName} not found in Template ${template.metadata.name}` : `Template ${template.metadata.name} has no environment` };
  }
  if (environment.environmentType !== 'VirtualMachine' && environment.environmentType !== 'CloudVM') {
    return { ok: false, permanent: true, message: `environment ${environment.name} is of type ${environment.environmentType}: only VirtualMachine and CloudVM environments can be snapshotted` };
  }
  if (!environment.persistent) {
    return { ok: false, permanent: true, message: `environment ${environment.name} is not persistent: only persistent VMs can be snapshotted` };
  }
  if (instance.spec.running !== false) {
    return { ok: false, permanent: true, message: `Instance ${instanceNs}/${instanceName} is running: stop it before taking a snapshot` };
  }
  return { ok: true, instance, template, environment };
}

/** Registry folder of a tenant's images: lower-cased, non-alphanumerics removed (`john.doe` → `johndoe`). */
export function snapshotImageDir(tenantName: string): string {
  return tenantName.toLowerCase().replace(/[^a-z0-9]/g, '');
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/**
 * `YYYYMMDD` + `t` + `HHMMSS` of `at` in the process's local time zone, as upstream (docs/behaviour.md §14.9);
 * pass `utc` to format in UTC instead.
 */
export function snapshotTag(at: Date, utc = false): string {
  const [y, mo, d, h, mi, s] = utc
    ? [at.getUTCFullYear(), at.getUTCMonth() + 1, at.getUTCDate(), at.getUTCHours(), at.getUTCMinutes(), at.getUTCSeconds()]
    : [at.getFullYear(), at.getMonth() + 1, at.getDate(), at.getHours(), at.getMinutes(), at.getSeconds()];
  return `${pad(y, 4)}${pad(mo)}${pad(d)}t${pad(h)}${pad(mi)}${pad(s)}`;
}

/** The tag of a snapshot whose Job time is not known (files without a creationTimestamp). */
export const UNKNOWN_TIME_TAG = '00000000t000000';

/**
 * The tag when no clock is given (files, gitops): the snapshot's creationTimestamp, the time the
 * request was made; `UNKNOWN_TIME_TAG` without one, so a render stays deterministic.
 */
export function requestTag(snapshot: InstanceSnapshot): string {
  const created = snapshot.metadata.creationTimestamp ? Date.parse(snapshot.metadata.creationTimestamp) : NaN;
  return Number.isFinite(created) ? snapshotTag(new Date(created)) : UNKNOWN_TIME_TAG;
}

/** kaniko's `--destination`: `<vmRegistry>/<imagedir>/<imageName>:<tag>` (docs/behaviour.md §9.3). */
export function snapshotDestination(vmRegistry: string, instance: Instance, imageName: string, tag: string): string {
  return `${vmRegistry}/${snapshotImageDir(instance.spec[TENANT_REF].name)}/${imageName}:${tag}`;
}

/** A Job as far as its outcome goes (batch/v1 status). */
export interface JobOutcome {
  status?: {
    conditions?: { type: string; status: string }[];
    startTime?: string;
    completionTime?: string;
  };
}

/**
 * The phase and event of a snapshot whose Job exists (docs/behaviour.md §9.2): Complete → Completed,
 * Failed → Failed, anything else → undefined (nothing to do yet).
 */
export function snapshotOutcome(job: JobOutcome, imageName: string): { phase: SnapshotPhase; event: SnapshotEvent } | undefined {
  const is = (type: string) => (job.status?.conditions ?? []).some((c) => c.type === type && c.status === 'True');
  if (is('Complete')) {
    const { startTime, completionTime } = job.status ?? {};
    const duration = startTime && completionTime ? goDuration(Date.parse(completionTime) - Date.parse(startTime)) : undefined;
    return { phase: 'Completed', event: SNAPSHOT_EVENTS.created(imageName, duration) };
  }
  if (is('Failed')) return { phase: 'Failed', event: SNAPSHOT_EVENTS.creationFailed };
  return undefined;
}
