/**
 * The CrownLabs custom resources exactly as the upstream CRDs define them, at both API levels
 * (src/inputs/api-level.ts): `2e8aeb9` (imports/crds/) and `e62be9e` (imports/crds/e62be9e/).
 * Field names are the wire names (e.g. `template.crownlabs.polito.it/TemplateRef`), so an object
 * read from a file or from the API server is used as it is, after schema validation and defaulting.
 * A field that one level has and the other has not is optional here and marked with its level;
 * validation against the run's level guarantees which of them an object holds.
 */

export const CROWNLABS_GROUP = 'crownlabs.polito.it';

/** A Kubernetes quantity as the CRDs accept it (int-or-string). */
export type QuantityValue = string | number;

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  resourceVersion?: string;
  generation?: number;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  [key: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface GenericRef {
  name: string;
  namespace?: string;
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

// --- Tenant (crownlabs.polito.it/v1alpha2, cluster-scoped) ---
/** `candidate`: e62be9e (a Tenant asking to join an `autoEnroll: withApproval` Workspace). */
export type WorkspaceRole = 'manager' | 'user' | 'candidate';

export interface TenantWorkspaceEntry {
  name: string;
  role: WorkspaceRole;
}

export interface TenantResourceQuota {
  cpu: QuantityValue;
  memory: QuantityValue;
  instances: number;
}

/**
 * e62be9e's shared quota shape (`ResourceSpec` plus `instances`): the Tenant's personal workspace
 * and a Workspace's quota. `cpu` is whole cores.
 */
export interface ResourceQuotaSpec {
  cpu: number;
  memory: QuantityValue;
  disk?: QuantityValue;
  otherResources?: Record<string, QuantityValue>;
  instances: number;
}

export interface TenantSpec {
  firstName: string;
  lastName: string;
  email: string;
  lastLogin?: string;
  workspaces?: TenantWorkspaceEntry[];
  publicKeys?: string[];
  createSandbox: boolean;
  /** 2e8aeb9 only. */
  quota?: TenantResourceQuota;
  /** e62be9e only: the Tenant's personal workspace, with its quota; absent: none. */
  personalWorkspace?: ResourceQuotaSpec;
}

export type SubscriptionStatus = 'Ok' | 'Failed';

export interface NameCreated {
  name?: string;
  created: boolean;
}

export interface TenantStatus {
  personalNamespace: NameCreated;
  sandboxNamespace: NameCreated;
  /** Required at 2e8aeb9, optional at e62be9e. */
  failingWorkspaces?: string[];
  /** Required at 2e8aeb9, optional at e62be9e. */
  subscriptions?: Record<string, SubscriptionStatus>;
  ready: boolean;
  /** 2e8aeb9 only. */
  quota?: TenantResourceQuota;
  /** e62be9e only (required there). */
  keycloak?: { userCreated: NameCreated; userConfirmed: boolean; userSynchronized: boolean };
  /** e62be9e only (required there). */
  personalWorkspaceCreated?: boolean;
}

export interface Tenant extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'Tenant';
  spec: TenantSpec;
  status?: TenantStatus;
}

// --- Workspace (crownlabs.polito.it/v1alpha1, cluster-scoped) ---
/** At 2e8aeb9 `cpu` is a quantity; at e62be9e whole cores, with `disk` and `otherResources` (ResourceQuotaSpec). */
export interface WorkspaceResourceQuota {
  cpu: QuantityValue;
  memory: QuantityValue;
  disk?: QuantityValue;
  otherResources?: Record<string, QuantityValue>;
  instances: number;
}

/** e62be9e: how a Tenant joins the Workspace by itself; `""`: it cannot. */
export type AutoEnroll = '' | 'withApproval' | 'immediate';

export interface WorkspaceSpec {
  prettyName: string;
  quota: WorkspaceResourceQuota;
  /** e62be9e only. */
  autoEnroll?: AutoEnroll;
}

export interface WorkspaceStatus {
  namespace?: NameCreated;
  subscription?: Record<string, SubscriptionStatus>;
  ready?: boolean;
}

export interface Workspace extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha1';
  kind: 'Workspace';
  spec: WorkspaceSpec;
  status?: WorkspaceStatus;
}

// --- Template (crownlabs.polito.it/v1alpha2, namespaced) ---
/** `LocalVM`: e62be9e only. */
export type EnvironmentType = 'VirtualMachine' | 'Container' | 'CloudVM' | 'Standalone' | 'LocalVM';

/** VirtualMachine, CloudVM and LocalVM environments are KubeVirt VMs. */
export function isVirtualMachineType(type: EnvironmentType): boolean {
  return type === 'VirtualMachine' || type === 'CloudVM' || type === 'LocalVM';
}
export type EnvironmentMode = 'Standard' | 'Exam' | 'Exercise';

export interface EnvironmentResources {
  cpu: number;
  reservedCPUPercentage: number;
  memory: QuantityValue;
  disk?: QuantityValue;
  /** e62be9e only. */
  otherResources?: Record<string, QuantityValue>;
}

/** e62be9e: a SharedVolume mounted into an environment. */
export interface SharedVolumeMount {
  sharedVolume: GenericRef;
  mountPath: string;
  readOnly: boolean;
}

export interface ContainerStartupOptions {
  sourceArchiveURL?: string;
  contentPath?: string;
  startupArgs?: string[];
  enforceWorkdir: boolean;
}

export interface Environment {
  name: string;
  image: string;
  environmentType: EnvironmentType;
  guiEnabled: boolean;
  disableControls: boolean;
  persistent: boolean;
  /** 2e8aeb9 only (defaulted to Standard there). */
  mode?: EnvironmentMode;
  rewriteURL: boolean;
  mountMyDriveVolume: boolean;
  storageClassName?: string;
  resources: EnvironmentResources;
  containerStartupOptions?: ContainerStartupOptions;
  /** e62be9e only. */
  sharedVolumeMounts?: SharedVolumeMount[];
}

export const WORKSPACE_REF = 'workspace.crownlabs.polito.it/WorkspaceRef';
export const TEMPLATE_REF = 'template.crownlabs.polito.it/TemplateRef';
export const TENANT_REF = 'tenant.crownlabs.polito.it/TenantRef';

export interface TemplateSpec {
  prettyName: string;
  description: string;
  [WORKSPACE_REF]?: GenericRef;
  /** 2e8aeb9 only (defaulted to "never" there). */
  deleteAfter?: string;
  /** e62be9e only (defaulted there): replaces deleteAfter. */
  cleanup?: TemplateCleanup;
  environmentList: Environment[];
  /** e62be9e only. */
  nodeSelector?: Record<string, string>;
  /** e62be9e only. */
  allowPublicExposure?: boolean;
}

/** e62be9e: durations `never` or `<n>[smhd]`. */
export interface TemplateCleanup {
  deleteAfterCreation: string;
  stopAfterInactivity: string;
  deleteAfterInactivity: string;
}

export interface Template extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'Template';
  spec: TemplateSpec;
}

// --- Instance (crownlabs.polito.it/v1alpha2, namespaced) ---
export type InstancePhase =
  | ''
  | 'Importing'
  | 'Starting'
  | 'ResourceQuotaExceeded'
  | 'Running'
  | 'Ready'
  | 'Stopping'
  | 'Off'
  | 'Failed'
  | 'CreationLoopBackoff';

export interface InstanceSpec {
  [TEMPLATE_REF]: GenericRef;
  [TENANT_REF]: GenericRef;
  running: boolean;
  prettyName?: string;
  /** 2e8aeb9 only. */
  customizationUrls?: {
    contentOrigin?: string;
    contentDestination?: string;
    statusCheck?: string;
  };
  /** e62be9e only: replaces customizationUrls.statusCheck. */
  statusCheckUrl?: string;
  /** e62be9e only: per environment name, replaces customizationUrls.contentOrigin/contentDestination. */
  contentUrls?: Record<string, { origin?: string; destination?: string }>;
  /** e62be9e only: used when the Template's nodeSelector is present and empty. */
  nodeSelector?: Record<string, string>;
  /** e62be9e only. */
  publicExposure?: { ports?: PublicExposurePort[] };
}

export interface PublicExposurePort {
  name: string;
  port: number;
  targetPort: number;
  protocol?: 'TCP' | 'UDP' | 'SCTP';
}

export interface InstanceAutomationStatus {
  lastCheckTime?: string;
  terminationTime?: string;
  submissionTime?: string;
}

/** e62be9e: the status of one environment. */
export interface EnvironmentStatus {
  name: string;
  phase?: InstancePhase;
  ip?: string;
  initialReadyTime?: string;
  automation?: InstanceAutomationStatus;
  expositionAccepted?: boolean;
}

export interface InstanceStatus {
  phase?: InstancePhase;
  url?: string;
  /** 2e8aeb9 only. */
  ip?: string;
  /** 2e8aeb9 only. */
  initialReadyTime?: string;
  /** 2e8aeb9 only. */
  automation?: InstanceAutomationStatus;
  /** e62be9e only. */
  environments?: EnvironmentStatus[];
  /** e62be9e only. */
  nodeName?: string;
  /** e62be9e only. */
  nodeSelector?: Record<string, string>;
  /** e62be9e only. */
  publicExposure?: { phase?: '' | 'Provisioning' | 'Ready' | 'Error'; externalIP?: string; message?: string; ports?: PublicExposurePort[] };
}

export interface Instance extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'Instance';
  spec: InstanceSpec;
  status?: InstanceStatus;
}

// --- InstanceSnapshot (crownlabs.polito.it/v1alpha2, namespaced) ---
export interface InstanceSnapshotSpec {
  instanceRef: GenericRef;
  environmentRef?: GenericRef;
  imageName: string;
}

export interface InstanceSnapshot extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'InstanceSnapshot';
  spec: InstanceSnapshotSpec;
  /** Any string at 2e8aeb9; e62be9e's enum: "", Pending, Processing, Completed, Failed. */
  status?: { phase: string };
}

// --- ImageList (crownlabs.polito.it/v1alpha1, cluster-scoped) ---
export interface ImageListSpec {
  registryName: string;
  /** e62be9e only. */
  projectBaseName?: string;
  images: { name: string; versions: string[] }[];
}

export interface ImageList extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha1';
  kind: 'ImageList';
  spec: ImageListSpec;
}

// --- SharedVolume (crownlabs.polito.it/v1alpha2, namespaced; e62be9e only) ---
export interface SharedVolume extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'SharedVolume';
  spec: { prettyName: string; size: QuantityValue };
  status?: { phase?: '' | 'Pending' | 'Provisioning' | 'Ready' | 'Deleting' | 'ResourceQuotaExceeded' | 'Error'; pvName?: string };
}

// --- Plain objects read from the input to describe the cluster as it is (never re-emitted) ---
export interface Namespace extends KubeObject {
  apiVersion: 'v1';
  kind: 'Namespace';
}

export interface Secret extends KubeObject {
  apiVersion: 'v1';
  kind: 'Secret';
  type?: string;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export type CrownLabsResource = Tenant | Workspace | Template | Instance | InstanceSnapshot | ImageList | SharedVolume;
export type InputObject = CrownLabsResource | Namespace | Secret;
export type InputKind = InputObject['kind'];

/** apiVersion, scope and plural of every kind the input may hold. */
export const INPUT_KINDS: Record<InputKind, { apiVersion: string; namespaced: boolean; plural: string }> = {
  Tenant: { apiVersion: 'crownlabs.polito.it/v1alpha2', namespaced: false, plural: 'tenants' },
  Workspace: { apiVersion: 'crownlabs.polito.it/v1alpha1', namespaced: false, plural: 'workspaces' },
  Template: { apiVersion: 'crownlabs.polito.it/v1alpha2', namespaced: true, plural: 'templates' },
  Instance: { apiVersion: 'crownlabs.polito.it/v1alpha2', namespaced: true, plural: 'instances' },
  InstanceSnapshot: { apiVersion: 'crownlabs.polito.it/v1alpha2', namespaced: true, plural: 'instancesnapshots' },
  ImageList: { apiVersion: 'crownlabs.polito.it/v1alpha1', namespaced: false, plural: 'imagelists' },
  SharedVolume: { apiVersion: 'crownlabs.polito.it/v1alpha2', namespaced: true, plural: 'sharedvolumes' },
  Namespace: { apiVersion: 'v1', namespaced: false, plural: 'namespaces' },
  Secret: { apiVersion: 'v1', namespaced: true, plural: 'secrets' },
};

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}
