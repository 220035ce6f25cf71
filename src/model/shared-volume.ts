/**
 * A SharedVolume's objects and the phase they give it (docs/behaviour.md §16.7): its PVC
 * `shvol-<name>`, a one-shot Job that hands the volume to the CrownLabs user, the mirror claims
 * through which Instances mount it, and the finalizer that holds its deletion while a Template or
 * an Instance mounts it. Names, labels and the finalizer are upstream's, so a lab switching
 * operators keeps its volumes. Pure: the reconciler reads and writes.
 */
import type { GenericRef, SharedVolume, Template, Workspace } from '../inputs/types.ts';
import { kindExistsAt, type ApiLevel } from '../inputs/api-level.ts';
import { canonicalQuantity } from './resources.ts';
import { MYDRIVE_MOUNT_PATH } from './mydrive.ts';
import { compareQuantities, formatQuantity, parseQuantity } from '../inputs/quantity.ts';
import { LABEL } from './labels.ts';

export const SHARED_VOLUME_FINALIZER = 'crownlabs.polito.it/shvolctrl-volume-protection';

/** Marks a volume whose owner the provisioning Job has set: it never runs again for it. */
export const PROVISIONING_LABEL = 'crownlabs.polito.it/volume-provisioning';
export const PROVISIONING_DONE = 'completed';

export const VOLUME_TYPE_LABEL = 'crownlabs.polito.it/volume-type';

/** Read by the PVC mirror provisioner: only namespaces with these labels may mirror the claim. */
export const MIRROR_AUTHORIZATION_ANNOTATION = 'pmp.crownlabs.polito.it/required-target-ns-labels';
export const SHARED_VOLUME_MIRROR_AUTHORIZATION = `${LABEL.type}=tenant`;

/** The CrownLabs user and group of every environment (uid and gid 1010). */
export const CROWNLABS_USER_ID = 1010;
/** Where the provisioning Job mounts the volume it chowns (upstream's MyDrive path, for every volume). */
export const PROVISIONING_MOUNT_PATH = MYDRIVE_MOUNT_PATH;

/**
 * What a Workspace's set renders for SharedVolumes at a level: nothing where the kind does not
 * exist; else the managers' binding and, when the Workspace has a disk quota, that as the bound
 * of its volumes' claims (a Workspace without one, as upstream, bounds nothing).
 */
export function workspaceSharedVolumes(workspace: Pick<Workspace, 'spec'>, level: ApiLevel): { storage?: string } | undefined {
  if (!kindExistsAt('SharedVolume', level)) return undefined;
  const disk = (workspace.spec.quota as { disk?: string | number } | undefined)?.disk;
  return disk === undefined ? {} : { storage: canonicalQuantity(disk) };
}

export function sharedVolumeClaimName(name: string): string {
  return `shvol-${name}`;
}

export function provisioningJobName(claimName: string): string {
  return `${claimName}-provision`;
}

/** Labels of the SharedVolume itself and of its objects. */
export function sharedVolumeLabels(): Record<string, string> {
  return { [LABEL.managedBy]: 'sharedvolume' };
}

export function sharedVolumeClaimLabels(): Record<string, string> {
  return { ...sharedVolumeLabels(), [VOLUME_TYPE_LABEL]: 'sharedvolume' };
}

export type SharedVolumePhase = NonNullable<NonNullable<SharedVolume['status']>['phase']>;

/** What the reconciler observed of a SharedVolume's claim and Job. */
export interface SharedVolumeObservation {
  /** The requested size the live claim holds (undefined: no claim yet). */
  claimSize?: string;
  claimPhase?: string;
  /** The PV the claim is bound to. */
  volumeName?: string;
  provisioned: boolean;
  job?: { succeeded: boolean; failed: boolean };
}

export interface SharedVolumeState {
  phase: SharedVolumePhase;
  pvName?: string;
  /** Set the finalizer: the volume is Ready, and from now on held while mounted. */
  protect: boolean;
  /** The Job succeeded: label the claim so that it never runs again. */
  markProvisioned: boolean;
  /** Why the phase is Error (an Event). */
  problem?: { reason: string; message: string };
}

/**
 * Whether the claim may take the SharedVolume's size: a claim only grows (the API server refuses a
 * smaller request, and a volume's data may not fit one).
 */
export function shrinks(spec: SharedVolume['spec'], claimSize: string | undefined): boolean {
  return claimSize !== undefined && compareQuantities(parseQuantity(spec.size), parseQuantity(claimSize)) < 0;
}

/** The phase, in upstream's order: a claim not Bound is Pending; Bound, Provisioning until the Job succeeded; then Ready. */
export function sharedVolumeState(sv: Pick<SharedVolume, 'spec'>, seen: SharedVolumeObservation): SharedVolumeState {
  if (shrinks(sv.spec, seen.claimSize)) {
    return {
      phase: 'Error',
      protect: false,
      markProvisioned: false,
      problem: { reason: 'InvalidSize', message: `size ${formatQuantity(parseQuantity(sv.spec.size))} is smaller than the volume's ${seen.claimSize}: a SharedVolume only grows` },
    };
  }
  if (seen.claimPhase !== 'Bound' || !seen.volumeName) return { phase: 'Pending', protect: false, markProvisioned: false };
  const pvName = seen.volumeName;
  if (seen.provisioned) return { phase: 'Ready', pvName, protect: true, markProvisioned: false };
  if (seen.job?.succeeded) return { phase: 'Ready', pvName, protect: true, markProvisioned: true };
  if (seen.job?.failed) {
    return { phase: 'Error', pvName, protect: false, markProvisioned: false, problem: { reason: 'ProvisioningFailed', message: 'the Job that sets the volume owner failed' } };
  }
  return { phase: 'Provisioning', pvName, protect: false, markProvisioned: false };
}

/** A mount's SharedVolume; a reference without a namespace names one in the Template's own namespace. */
export function mountedVolume(ref: GenericRef, templateNamespace: string): { namespace: string; name: string } {
  return { namespace: ref.namespace || templateNamespace, name: ref.name };
}

/** `namespace/name` of every SharedVolume a Template mounts, in any environment. */
export function templateMounts(template: Pick<Template, 'metadata' | 'spec'>): string[] {
  const ns = template.metadata.namespace ?? '';
  const out = new Set<string>();
  // Read from stored objects too, which may fail validation: missing lists count as none.
  for (const env of template.spec?.environmentList ?? []) {
    for (const m of env?.sharedVolumeMounts ?? []) {
      if (!m?.sharedVolume?.name) continue;
      const v = mountedVolume(m.sharedVolume, ns);
      out.add(`${v.namespace}/${v.name}`);
    }
  }
  return [...out];
}

/** What holds a SharedVolume's deletion: the Templates that mount it, and the Instances that do. */
export interface Mounters {
  templates: string[];
  instances: string[];
}

/** A mirror claim as the cache holds it: where it is, what it mirrors, and its owner. */
export interface MirrorClaim {
  metadata: { namespace?: string; ownerReferences?: readonly { kind: string; name: string }[] };
  spec?: { dataSourceRef?: { kind?: string; name?: string; namespace?: string } };
}

/** The SharedVolume (`namespace/name`) a claim mirrors, if it mirrors one. */
export function mirroredVolume(claim: MirrorClaim): string | undefined {
  const ref = claim.spec?.dataSourceRef;
  if (ref?.kind !== 'PersistentVolumeClaim' || !ref.namespace || !ref.name?.startsWith('shvol-')) return undefined;
  return `${ref.namespace}/${ref.name.slice('shvol-'.length)}`;
}

/**
 * The Templates that mount the volume, and the Instances that do: those with a mirror claim of it,
 * rendered from the Template spec they froze (an edited Template does not change them) and kept
 * while their pods may use it.
 */
export function sharedVolumeMounters(sv: { metadata: { name: string; namespace?: string } }, templates: Iterable<Pick<Template, 'metadata' | 'spec'>>, claims: Iterable<MirrorClaim>): Mounters {
  const key = `${sv.metadata.namespace}/${sv.metadata.name}`;
  const mounting = new Set<string>();
  for (const t of templates) if (templateMounts(t).includes(key)) mounting.add(`${t.metadata.namespace}/${t.metadata.name}`);
  const using = new Set<string>();
  for (const c of claims) {
    if (mirroredVolume(c) !== key) continue;
    const owner = (c.metadata.ownerReferences ?? []).find((r) => r.kind === 'Instance');
    if (owner) using.add(`${c.metadata.namespace}/${owner.name}`);
  }
  return { templates: [...mounting].sort(), instances: [...using].sort() };
}

export function heldBy(m: Mounters): boolean {
  return m.templates.length > 0 || m.instances.length > 0;
}

export function mountersMessage(m: Mounters): string {
  const parts: string[] = [];
  if (m.templates.length) parts.push(`Template${m.templates.length > 1 ? 's' : ''} ${m.templates.join(', ')}`);
  if (m.instances.length) parts.push(`Instance${m.instances.length > 1 ? 's' : ''} ${m.instances.join(', ')}`);
  return `deletion held: mounted by ${parts.join('; ')}`;
}

/** The last `n` characters: upstream keeps the ends of long names, which tell them apart. */
function lastChars(s: string, n: number): string {
  return s.length > n ? s.slice(s.length - n) : s;
}

/**
 * The mirror claim through which an Instance mounts a SharedVolume, in the Instance's namespace:
 * upstream's name, also the pod's volume name, so at most 63 characters.
 */
export function sharedVolumeMirrorName(volume: string, instance: string): string {
  return `${lastChars(volume, 27)}-${lastChars(instance, 27)}-mirror`;
}

/** One SharedVolume as an environment mounts it. */
export interface SharedVolumeMountPlan {
  /** The mirror claim in the Instance's namespace, also the pod's volume name. */
  claimName: string;
  /** The SharedVolume's own claim, which the mirror mirrors. */
  origin: { namespace: string; claimName: string };
  mountPath: string;
  readOnly: boolean;
}

/**
 * An environment's SharedVolume mounts: read-only as the Template says, read-write for the
 * workspace's managers (upstream's rule). Each volume must exist; the missing ones are returned.
 */
export function environmentMounts(
  mounts: readonly { sharedVolume: GenericRef; mountPath: string; readOnly: boolean }[],
  templateNamespace: string,
  instanceName: string,
  manager: boolean,
  exists: (namespace: string, name: string) => boolean,
): { mounts: SharedVolumeMountPlan[]; missing: string[] } {
  const out: SharedVolumeMountPlan[] = [];
  const missing: string[] = [];
  for (const m of mounts) {
    const v = mountedVolume(m.sharedVolume, templateNamespace);
    if (!exists(v.namespace, v.name)) {
      missing.push(`${v.namespace}/${v.name}`);
      continue;
    }
    out.push({
      claimName: sharedVolumeMirrorName(v.name, instanceName),
      origin: { namespace: v.namespace, claimName: sharedVolumeClaimName(v.name) },
      mountPath: m.mountPath,
      readOnly: manager ? false : m.readOnly,
    });
  }
  return { mounts: out, missing };
}
