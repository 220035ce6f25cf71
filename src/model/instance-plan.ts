import { createHash } from 'node:crypto';
import type { InventoryLookups } from '../inputs/inventory.ts';
import type { Problem } from '../inputs/problems.ts';
import { publicKeyLine } from './ssh-public-key.ts';
import { isVirtualMachineType, objectKey, TEMPLATE_REF, TENANT_REF, WORKSPACE_REF, type Environment, type EnvironmentMode, type Instance, type Template, type Tenant } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { instanceObjectLabels, instanceSelectorLabels, LABEL, type InstanceIdentity } from './labels.ts';
import { statusCheckUrl } from './customization-urls.ts';
import { LEVEL_RENDERING, type GuiRoute, type LevelRendering, type ServicePort, type VolumeMode } from './level-rendering.ts';
import { CHILDREN_LEVEL_ANNOTATION, childrenLevel, type ApiLevel } from '../inputs/api-level.ts';
import { CONTAINER_POD_LAYOUT, containerPodPlan, type ContainerPodPlan } from './pod-layout.ts';
import { enrolmentProblem } from './enrolment.ts';
import { environmentMounts, type SharedVolumeMountPlan } from './shared-volume.ts';
import { MYDRIVE_ACCESS, MYDRIVE_INFO_SECRET, MYDRIVE_MOUNT_PATH, myDriveMirrorName, nfsShareFromConfig, nfsShareFromSecret, type NfsShare } from './mydrive.ts';
import { canon, tenantNamespaceName } from './naming.ts';
import { admittedByTenantWebhooks } from './tenant-plan.ts';
import { publicExposurePlan, publicExposureRequest, type PublicExposurePlan, type PublicExposureSource } from './public-exposure.ts';
import { canonicalQuantity, containerResources, virtualMachineResources, type ComputeResources } from './resources.ts';
import { exposure, parseGatewayRef, type Exposure, type GatewayRef } from './exposition.ts';

/** A claim an environment mounts besides its own disk: MyDrive's mirror first, then its SharedVolumes' (upstream's order). */
export interface ClaimMount {
  claimName: string;
  mountPath: string;
  readOnly: boolean;
}

export function claimMounts(env: Pick<EnvironmentPlan, 'myDriveClaim' | 'sharedVolumes'>): ClaimMount[] {
  const out: ClaimMount[] = env.myDriveClaim ? [{ claimName: env.myDriveClaim, mountPath: MYDRIVE_MOUNT_PATH, readOnly: false }] : [];
  for (const m of env.sharedVolumes ?? []) out.push({ claimName: m.claimName, mountPath: m.mountPath, readOnly: m.readOnly });
  return out;
}

/** An annotation on the Instance holding the Template spec it was created from (docs/behaviour.md Decision 3). */
export const FROZEN_TEMPLATE_ANNOTATION = 'composer.crownlabs.polito.it/template-spec';

export type { ServicePort };

/** Everything the constructs need for one environment of an Instance, derived purely. */
export interface EnvironmentPlan {
  env: Environment;
  /** Name of the environment's children (LEVEL_RENDERING.childName). */
  name: string;
  /** Labels of the environment's children; selectorLabels are those of its Pods and VMIs, and of their selectors. */
  objectLabels: Record<string, string>;
  selectorLabels: Record<string, string>;
  isVM: boolean;
  isContainer: boolean;
  isStandalone: boolean;
  persistent: boolean;
  /** Standard at e62be9e, which has no modes. */
  mode: EnvironmentMode;
  /** Standard mode: cloud-init, shared auth and the mydrive port apply only to it. */
  standardMode: boolean;
  /** Service and Ingress exist (running); the Ingress only with a GUI. */
  exposed: boolean;
  /**
   * The workload runs: the Deployment has 1 replica, an ephemeral VMI is rendered. True while the
   * Instance runs, and for a stopped ephemeral one under `stoppedEphemeral: keep-running` (upstream
   * keeps it running to avoid data loss, docs/behaviour.md Decision 9). A persistent VM follows `running`.
   */
  workloadRunning: boolean;
  servicePorts: ServicePort[];
  /** The Service is headless (LEVEL_RENDERING). */
  headlessService: boolean;
  host: string;
  /** The path the environment is served under (LEVEL_RENDERING.basePath). */
  basePath: string;
  /** The GUI's Ingress; absent: none. */
  route?: GuiRoute;
  /** URL of this environment's GUI, when exposed with a GUI. */
  url?: string;
  vmResources?: ComputeResources;
  containerResources?: ComputeResources;
  /** Container and Standalone: how the Deployment's Pod is laid out and the paths its app serves (CONTAINER_POD_LAYOUT). */
  pod?: ContainerPodPlan;
  /** The MyDrive share to mount, when the environment asks for it and it is known. */
  nfs?: NfsShare;
  /** e62be9e: the SharedVolumes it mounts, each through its mirror claim (docs/behaviour.md §16.7); absent: none. */
  sharedVolumes?: SharedVolumeMountPlan[];
  /** e62be9e: the mirror of the owner's MyDrive claim in the personal namespace (§16.8), when the environment mounts MyDrive. */
  myDriveClaim?: string;
  /** Node labels the VMI or Pod is scheduled by (docs/behaviour.md §16.3); absent when none. */
  nodeSelector?: Record<string, string>;
  /** A persistent VM's root disk: its volumeMode (LEVEL_RENDERING) and, for a LocalVM, the golden PVC cloned. */
  rootDisk?: { volumeMode?: VolumeMode; goldenPvc?: GoldenPvc };
  /** The MAC address a persistent VM keeps across restarts, once its VMI reported one (docs/behaviour.md §16.3). */
  macAddress?: string;
}

/** A LocalVM's golden image: the PVC CDI clones, named by the environment's `image` as `<namespace>/<name>`. */
export interface GoldenPvc {
  namespace: string;
  name: string;
}

/** The golden PVC an `image` names, or undefined when it is not `<namespace>/<name>`. */
export function goldenPvc(image: string): GoldenPvc | undefined {
  const parts = image.split('/');
  return parts.length === 2 && parts[0] && parts[1] ? { namespace: parts[0], name: parts[1] } : undefined;
}

/**
 * The node labels an Instance's workloads are scheduled by (docs/behaviour.md §16.3): none when the
 * Template has no `nodeSelector`; the Instance's when the Template's is present and empty; else the
 * Template's. Empty is none.
 */
export function nodeSelectorOf(instance: Instance, template: Template): Record<string, string> | undefined {
  const fromTemplate = template.spec.nodeSelector;
  if (fromTemplate === undefined) return undefined;
  const chosen = Object.keys(fromTemplate).length === 0 ? instance.spec.nodeSelector : fromTemplate;
  return chosen && Object.keys(chosen).length > 0 ? chosen : undefined;
}

/**
 * The MAC address a persistent VM keeps: the one already in its template's first interface, else
 * the one its running VMI reports on its first interface (how upstream e62be9e keeps it).
 */
export function observedMacAddress(vm: unknown, vmi: unknown): string | undefined {
  const fromVm = (vm as { spec?: { template?: { spec?: { domain?: { devices?: { interfaces?: { macAddress?: string }[] } } } } } } | undefined)?.spec?.template?.spec
    ?.domain?.devices?.interfaces?.[0]?.macAddress;
  const fromVmi = (vmi as { status?: { interfaces?: { mac?: string }[] } } | undefined)?.status?.interfaces?.[0]?.mac;
  return fromVm || fromVmi || undefined;
}

/** Observed state the controller knows and files do not (compose's ComposeOptions). */
export interface PlanObservations {
  /** The MAC address of the VM (or its VMI) named `name` in `namespace`, when known. */
  vmMacAddress?: (namespace: string, name: string) => string | undefined;
  /** The Instance's public-exposure allocation (docs/behaviour.md §18): the controller's allocator, or the file sinks' fixed order. */
  publicExposure?: PublicExposureSource;
}

export interface InstancePlan {
  instance: Instance;
  template: Template;
  tenant: Tenant;
  key: string;
  namespace: string;
  uid: string;
  identity: InstanceIdentity;
  /** Labels of the children shared by the environments (the cloud-init Secret). */
  objectLabels: Record<string, string>;
  running: boolean;
  workspaceName: string;
  /** Name of the cloud-init Secret (shared by every VM environment). */
  cloudInitName: string;
  /** Tenant keys followed by the workspace managers' keys, owner excluded (docs/behaviour.md §7.4). */
  publicKeys: string[];
  /** E-mails admitted by a per-instance oauth2-proxy: the owner, then the workspace managers. */
  allowedEmails: string[];
  environments: EnvironmentPlan[];
  /** Instance-level status URL, when any environment is exposed with a GUI. */
  url?: string;
  /** What exposes a GUI route (the configuration's exposition). */
  exposure: Exposure;
  /** The Gateway HTTPRoutes attach to, when they are rendered. */
  gateway?: GatewayRef;
  /** Public exposure (e62be9e): absent when not asked for or not running. */
  publicExposure?: PublicExposurePlan;
}

/**
 * The UID used in paths and URLs. A live Instance has one; an Instance read from a file may not,
 * so a stable one is derived from its namespace and name (a name-based UUID, version 5 layout).
 */
export function instanceUid(instance: Instance): string {
  if (instance.metadata.uid) return instance.metadata.uid;
  const h = createHash('sha1').update(`crownlabs-composer/Instance/${objectKey(instance)}`).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The environments an Instance is rendered from: the Template's, unless the Instance carries the
 * spec it was created with (the controller freezes it so a Template edit restarts nothing).
 */
export function effectiveEnvironments(instance: Instance, template: Template): Environment[] {
  const frozen = instance.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION];
  if (frozen) {
    try {
      const parsed = JSON.parse(frozen) as { environmentList?: Environment[] };
      if (Array.isArray(parsed.environmentList) && parsed.environmentList.length > 0) return parsed.environmentList;
    } catch {
      // A damaged annotation falls back to the live Template rather than blocking the Instance.
    }
  }
  return template.spec.environmentList;
}

export type PlanResult = { plan: InstancePlan; problems: Problem[] } | { plan?: undefined; problems: Problem[] };

/**
 * Derives the plan of one Instance, or the problems that prevent rendering it. `tenantShare` is
 * where the owner's MyDrive share comes from when no `mydrive-info` Secret is known (files:
 * configuration; controller: the bound PV) — the same source the tenant's set renders it from.
 */
export function planInstance(
  instance: Instance,
  inventory: InventoryLookups,
  config: ComposerConfig,
  tenantShare: (tenant: Tenant) => NfsShare | undefined = (t) => nfsShareFromConfig(config, t.metadata.name),
  observed: PlanObservations = {},
): PlanResult {
  const problems: Problem[] = [];
  const src = inventory.sourceOf(instance);
  const about = { file: src?.file, document: src?.document, kind: 'Instance', name: objectKey(instance) };
  const template = inventory.templateOf(instance);
  const tenant = inventory.tenantOf(instance);
  if (!template || !tenant) {
    // Reported by Inventory.checkReferences; nothing to render.
    return { problems };
  }
  const notEnrolled = enrolmentProblem(tenant, template);
  if (notEnrolled) {
    problems.push({ severity: 'error', ...about, field: `spec["${TENANT_REF}"]`, message: notEnrolled });
    return { problems };
  }
  const namespace = instance.metadata.namespace ?? '';
  const uid = instanceUid(instance);
  const identity: InstanceIdentity = {
    instanceName: instance.metadata.name,
    templateName: instance.spec[TEMPLATE_REF].name,
    tenantName: instance.spec[TENANT_REF].name,
  };
  const running = instance.spec.running !== false;
  const envs = effectiveEnvironments(instance, template);
  const several = envs.length > 1;
  const workspaceName = template.spec[WORKSPACE_REF]?.name ?? '';
  const managers = workspaceName ? inventory.managersOf(workspaceName).filter((t) => t.metadata.name !== tenant.metadata.name && admittedByTenantWebhooks(t, config)) : [];
  // Into a VM's authorized_keys only as `<known type> <base64> [comment]` (src/model/ssh-public-key.ts).
  const vm = envs.some((e) => isVirtualMachineType(e.environmentType));
  const publicKeys: string[] = [];
  for (const t of [tenant, ...managers]) {
    (t.spec.publicKeys ?? []).forEach((entry, i) => {
      const r = publicKeyLine(entry);
      if ('line' in r) publicKeys.push(r.line);
      else if (vm) problems.push({ severity: 'warning', ...about, message: `Tenant ${t.metadata.name}: spec.publicKeys[${i}] left out of the VM's authorized keys: ${r.reason}` });
    });
  }
  const allowedEmails = [...new Set([tenant.spec.email, ...managers.map((m) => m.spec.email)].map((e) => e.toLowerCase()))];

  const renderedAt = childrenLevel(instance, inventory.level);
  if (typeof renderedAt !== 'string') {
    problems.push({ severity: 'error', ...about, field: `metadata.annotations.${CHILDREN_LEVEL_ANNOTATION}`, message: renderedAt.problem });
    return { problems };
  }
  const rendering = LEVEL_RENDERING[renderedAt];
  // MyDrive over NFS or through its mirror claim, as the children are rendered (MYDRIVE_ACCESS).
  const myDriveAccess = MYDRIVE_ACCESS[renderedAt];
  const nfsNeeded = myDriveAccess === 'nfs' && envs.some((e) => e.mountMyDriveVolume);
  let nfs: NfsShare | undefined;
  if (nfsNeeded) {
    nfs = nfsShareFromSecret(inventory.secret(namespace, MYDRIVE_INFO_SECRET));
    if (!nfs && namespace === tenantNamespaceName(tenant.metadata.name)) nfs = tenantShare(tenant);
    if (!nfs) {
      problems.push({
        severity: 'error',
        ...about,
        field: 'spec.environmentList[].mountMyDriveVolume',
        message: `Secret ${namespace}/${MYDRIVE_INFO_SECRET} with keys server-name and path is required to mount MyDrive (give it in the input, or set mydriveNfsServerName)`,
      });
      return { problems };
    }
  }

  // The Pods' layout follows the level the children are rendered at, as LEVEL_RENDERING does.
  const podLayout = CONTAINER_POD_LAYOUT[renderedAt];
  const nodeSelector = nodeSelectorOf(instance, template);
  for (const [i, env] of envs.entries()) {
    if (env.environmentType !== 'LocalVM') continue;
    const field = `spec.environmentList[${i}]`;
    if (!env.persistent) problems.push({ severity: 'error', ...about, field, message: `Template ${objectKey(template)}: environment ${env.name} is a LocalVM, whose disk is a clone of a PVC: it must be persistent` });
    else if (!goldenPvc(env.image)) problems.push({ severity: 'error', ...about, field, message: `Template ${objectKey(template)}: environment ${env.name}: a LocalVM image names its golden PVC as <namespace>/<name>, not ${JSON.stringify(env.image)}` });
  }
  // Upstream's rule: the workspace's managers mount every SharedVolume read-write.
  const manager = (tenant.spec.workspaces ?? []).some((w) => w.name === workspaceName && w.role === 'manager');
  const templateNamespace = template.metadata.namespace ?? '';
  const volumeMounts = envs.map((env, i) => {
    const r = environmentMounts(env.sharedVolumeMounts ?? [], templateNamespace, instance.metadata.name, manager, (ns, n) => !!inventory.sharedVolume(ns, n));
    for (const v of r.missing) {
      problems.push({ severity: 'error', ...about, field: `spec.environmentList[${i}].sharedVolumeMounts`, message: `Template ${objectKey(template)}: environment ${env.name} mounts SharedVolume ${v}, which does not exist` });
    }
    return r.mounts;
  });
  if (problems.some((p) => p.severity === 'error')) return { problems };

  const environments = envs.map((env, envIndex): EnvironmentPlan => {
    const isVM = isVirtualMachineType(env.environmentType);
    const isContainer = env.environmentType === 'Container';
    const isStandalone = env.environmentType === 'Standalone';
    const mode = env.mode ?? 'Standard';
    const standardMode = mode === 'Standard';
    const name = rendering.childName(canon(instance.metadata.name), env.name, several);
    const basePath = rendering.basePath(uid, env.name, several);
    const host = mode === 'Exam' ? `exam.${config.websiteBaseUrl}` : mode === 'Exercise' ? `exercise.${config.websiteBaseUrl}` : config.websiteBaseUrl;
    const servicePorts = rendering.servicePorts({ isVM, isContainer, isStandalone, guiEnabled: env.guiEnabled, standardMode });
    const route = rendering.guiRoute(name, basePath, { isVM, isStandalone, guiEnabled: env.guiEnabled, rewriteURL: env.rewriteURL });
    const exposed = running;
    const workloadRunning = running || (!env.persistent && config.stoppedEphemeral === 'keep-running');
    const labels: Record<string, string> = rendering.environmentLabel ? { [LABEL.environment]: env.name } : {};
    return {
      env,
      name,
      isVM,
      isContainer,
      isStandalone,
      persistent: env.persistent,
      mode,
      standardMode,
      exposed,
      workloadRunning,
      servicePorts,
      headlessService: rendering.headlessService,
      host,
      basePath,
      objectLabels: { ...instanceObjectLabels(identity), ...labels },
      selectorLabels: { ...instanceSelectorLabels(identity), ...labels },
      ...(route ? { route } : {}),
      url: exposed && route ? `https://${host}${route.urlPath}` : undefined,
      vmResources: isVM ? virtualMachineResources(env.resources) : undefined,
      containerResources: isVM ? undefined : containerResources(env.resources),
      ...(isVM ? {} : { pod: containerPodPlan(podLayout, basePath, { isContainer, rewriteURL: env.rewriteURL }) }),
      nfs: env.mountMyDriveVolume ? nfs : undefined,
      ...(env.mountMyDriveVolume && myDriveAccess === 'mirror' ? { myDriveClaim: myDriveMirrorName(tenant.metadata.name) } : {}),
      ...(volumeMounts[envIndex].length ? { sharedVolumes: volumeMounts[envIndex] } : {}),
      ...(nodeSelector ? { nodeSelector } : {}),
      ...(isVM && env.persistent ? persistentVmParts(rendering, env, namespace, name, observed) : {}),
    };
  });

  const exposes = exposure(config.exposition);
  const guiEnvs = environments.filter((e) => e.url);
  const urlPath = rendering.instanceUrlPath(uid, guiEnvs.map((e) => e.route!.urlPath));
  const url = urlPath === undefined ? undefined : `https://${guiEnvs[0].host}${urlPath}`;
  // Upstream selects the Instance's Pods without the environment label (one environment only).
  const publicExposure = publicExposurePlan(publicExposureRequest(inventory.level, instance, template, envs, config), instance, instanceSelectorLabels(identity), config, observed.publicExposure);
  if (publicExposure?.state === 'refused') problems.push({ severity: 'warning', ...about, field: 'spec.publicExposure.ports', message: `${publicExposure.message}: no LoadBalancer Service is rendered` });

  return {
    plan: {
      instance,
      template,
      tenant,
      key: objectKey(instance),
      namespace,
      uid,
      identity,
      objectLabels: instanceObjectLabels(identity),
      running,
      workspaceName,
      cloudInitName: canon(instance.metadata.name),
      publicKeys,
      allowedEmails,
      environments,
      url,
      exposure: exposes,
      ...(exposes.httpRoute ? { gateway: parseGatewayRef(config.gatewayRef) } : {}),
      ...(publicExposure ? { publicExposure } : {}),
    },
    problems,
  };
}


function persistentVmParts(rendering: LevelRendering, env: Environment, namespace: string, name: string, observed: PlanObservations): Pick<EnvironmentPlan, 'rootDisk' | 'macAddress'> {
  const volumeMode = rendering.rootDiskVolumeMode(env.environmentType);
  const golden = env.environmentType === 'LocalVM' ? goldenPvc(env.image) : undefined;
  const macAddress = rendering.keepsMacAddress ? observed.vmMacAddress?.(namespace, name) : undefined;
  return {
    rootDisk: { ...(volumeMode ? { volumeMode } : {}), ...(golden ? { goldenPvc: golden } : {}) },
    ...(macAddress ? { macAddress } : {}),
  };
}

/** Labels the operator keeps on the Instance itself (docs/behaviour.md §7.2 step 5), merged over its own. */
export function instanceOwnLabels(instance: Instance, template: Template, level: ApiLevel): Record<string, string> {
  const envs = effectiveEnvironments(instance, template);
  const labels: Record<string, string> = {
    ...(instance.metadata.labels ?? {}),
    [LABEL.managedBy]: 'instance',
    [LABEL.workspace]: template.spec[WORKSPACE_REF]?.name ?? '',
    [LABEL.template]: template.metadata.name,
    [LABEL.persistent]: envs.some((e) => e.persistent) ? 'true' : 'false',
  };
  if (LEVEL_RENDERING[level].nodeSelectorLabel) labels[LABEL.hasNodeSelector] = nodeSelectorOf(instance, template) ? 'true' : 'false';
  if (statusCheckUrl(instance) && !instance.metadata.labels?.[LABEL.watchForInstanceTermination]) {
    labels[LABEL.watchForInstanceTermination] = 'true';
  }
  return labels;
}

export { canonicalQuantity };
