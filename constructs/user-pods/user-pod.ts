import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { LOCAL_REGISTRY_PLACEHOLDER, USER_STORAGE_VOLUME } from '../../src/model/user-pods.ts';

/** A container as the manifest gives it (only the fields we change are typed). */
interface ManifestContainer {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  volumeMounts?: { name: string; mountPath: string }[];
  [k: string]: unknown;
}

export interface ManifestPodSpec {
  containers: ManifestContainer[];
  volumes?: { name: string; [k: string]: unknown }[];
  imagePullSecrets?: { name: string }[];
  restartPolicy?: string;
  [k: string]: unknown;
}

export interface UserPodProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly annotations: Record<string, string>;
  /** The whitelisted manifest's pod spec, kept verbatim but for the changes below. */
  readonly manifestSpec: ManifestPodSpec;
  /** The request's settings: container name → env var → value (set, overwriting). */
  readonly settings: Record<string, Record<string, string>>;
  /** Set in every container after the settings (SD_UID, HOME_SERVER_*). */
  readonly mandatoryEnv: Record<string, string>;
  /** Only when the manifest sets none. Empty: the API server's default. */
  readonly defaultRestartPolicy: string;
  readonly localRegistryUrl: string;
  readonly localRegistrySecret: string;
  /** PVC of the user's storage, which the `sciencedata` volume points to. */
  readonly storageClaimName: string;
}

function setEnv(env: NonNullable<ManifestContainer['env']>, name: string, value: string): void {
  const existing = env.find((e) => e.name === name);
  if (existing) {
    existing.value = value;
    delete existing.valueFrom;
  } else env.push({ name, value });
}

/**
 * The pod spec of a user pod (seed 004, create_pod): the manifest's, with the request's env
 * settings and the mandatory env in each container, LOCALREGISTRY replaced (plus the pull Secret),
 * the default restart policy, and the `sciencedata` volume pointing at the user's storage claim.
 */
export function userPodSpec(props: Omit<UserPodProps, 'name' | 'namespace' | 'labels' | 'annotations'>): ManifestPodSpec {
  const spec = structuredClone(props.manifestSpec);
  if (!spec.restartPolicy && props.defaultRestartPolicy) spec.restartPolicy = props.defaultRestartPolicy;
  let usesLocalRegistry = false;
  for (const c of spec.containers) {
    c.env = c.env ?? [];
    for (const [k, v] of Object.entries(props.settings[c.name] ?? {})) setEnv(c.env, k, v);
    for (const [k, v] of Object.entries(props.mandatoryEnv)) setEnv(c.env, k, v);
    if (c.image?.includes(LOCAL_REGISTRY_PLACEHOLDER)) {
      usesLocalRegistry = true;
      c.image = c.image.replace(LOCAL_REGISTRY_PLACEHOLDER, props.localRegistryUrl);
    }
  }
  if (usesLocalRegistry && props.localRegistrySecret) {
    const secrets = spec.imagePullSecrets ?? [];
    if (!secrets.some((s) => s.name === props.localRegistrySecret)) secrets.push({ name: props.localRegistrySecret });
    spec.imagePullSecrets = secrets;
  }
  const mountsStorage = spec.containers.some((c) => c.volumeMounts?.some((m) => m.name === USER_STORAGE_VOLUME));
  const volumes = (spec.volumes ?? []).filter((v) => v.name !== USER_STORAGE_VOLUME);
  if (mountsStorage || spec.volumes?.some((v) => v.name === USER_STORAGE_VOLUME)) {
    volumes.push({ name: USER_STORAGE_VOLUME, persistentVolumeClaim: { claimName: props.storageClaimName } });
  }
  if (volumes.length || spec.volumes) spec.volumes = volumes;
  return spec;
}

/** Whether a (rendered) pod spec mounts the user's storage. */
export function usesUserStorage(spec: ManifestPodSpec): boolean {
  return (spec.volumes ?? []).some((v) => v.name === USER_STORAGE_VOLUME);
}

/**
 * A KubePod whose spec is written verbatim: the manifest's spec is the operators' (whitelisted),
 * and the 1.27 L1 conversion would drop what it does not type (newer fields, plain quantities).
 */
class VerbatimSpecPod extends k8s.KubePod {
  constructor(scope: Construct, id: string, props: k8s.KubePodProps, private readonly verbatimSpec: ManifestPodSpec) {
    super(scope, id, props);
  }
  override toJson(): any {
    return { ...super.toJson(), spec: structuredClone(this.verbatimSpec) };
  }
}

/** The user pod of a create_pod request. */
export class UserPod extends Construct {
  readonly spec: ManifestPodSpec;
  constructor(scope: Construct, id: string, props: UserPodProps) {
    super(scope, id);
    this.spec = userPodSpec(props);
    new VerbatimSpecPod(this, 'pod', { metadata: { name: props.name, namespace: props.namespace, labels: props.labels, annotations: props.annotations } }, this.spec);
  }
}
