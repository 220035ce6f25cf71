/**
 * The CrownLabs custom resources exactly as the upstream CRDs define them (imports/crds/).
 * Field names are the wire names (e.g. `template.crownlabs.polito.it/TemplateRef`), so an object
 * read from a file or from the API server is used as it is, after schema validation and defaulting.
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
export type WorkspaceRole = 'manager' | 'user';

export interface TenantWorkspaceEntry {
  name: string;
  role: WorkspaceRole;
}

export interface TenantResourceQuota {
  cpu: QuantityValue;
  memory: QuantityValue;
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
  quota?: TenantResourceQuota;
}

export type SubscriptionStatus = 'Ok' | 'Failed';

export interface NameCreated {
  name?: string;
  created: boolean;
}

export interface TenantStatus {
  personalNamespace: NameCreated;
  sandboxNamespace: NameCreated;
  failingWorkspaces: string[];
  subscriptions: Record<string, SubscriptionStatus>;
  ready: boolean;
  quota?: TenantResourceQuota;
}

export interface Tenant extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha2';
  kind: 'Tenant';
  spec: TenantSpec;
  status?: TenantStatus;
}

// --- Workspace (crownlabs.polito.it/v1alpha1, cluster-scoped) ---
export interface WorkspaceResourceQuota {
  cpu: QuantityValue;
  memory: QuantityValue;
  instances: number;
}

export interface WorkspaceSpec {
  prettyName: string;
  quota: WorkspaceResourceQuota;
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
export type EnvironmentType = 'VirtualMachine' | 'Container' | 'CloudVM' | 'Standalone';
export type EnvironmentMode = 'Standard' | 'Exam' | 'Exercise';

export interface EnvironmentResources {
  cpu: number;
  reservedCPUPercentage: number;
  memory: QuantityValue;
  disk?: QuantityValue;
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
  mode: EnvironmentMode;
  rewriteURL: boolean;
  mountMyDriveVolume: boolean;
  storageClassName?: string;
  resources: EnvironmentResources;
  containerStartupOptions?: ContainerStartupOptions;
}

export const WORKSPACE_REF = 'workspace.crownlabs.polito.it/WorkspaceRef';
export const TEMPLATE_REF = 'template.crownlabs.polito.it/TemplateRef';
export const TENANT_REF = 'tenant.crownlabs.polito.it/TenantRef';

export interface TemplateSpec {
  prettyName: string;
  description: string;
  [WORKSPACE_REF]?: GenericRef;
  deleteAfter: string;
  environmentList: Environment[];
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
  customizationUrls?: {
    contentOrigin?: string;
    contentDestination?: string;
    statusCheck?: string;
  };
}

export interface InstanceStatus {
  phase?: InstancePhase;
  url?: string;
  ip?: string;
  initialReadyTime?: string;
  automation?: {
    lastCheckTime?: string;
    terminationTime?: string;
    submissionTime?: string;
  };
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
  status?: { phase: string };
}

// --- ImageList (crownlabs.polito.it/v1alpha1, cluster-scoped) ---
export interface ImageListSpec {
  registryName: string;
  images: { name: string; versions: string[] }[];
}

export interface ImageList extends KubeObject {
  apiVersion: 'crownlabs.polito.it/v1alpha1';
  kind: 'ImageList';
  spec: ImageListSpec;
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

export type CrownLabsResource = Tenant | Workspace | Template | Instance | InstanceSnapshot | ImageList;
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
  Namespace: { apiVersion: 'v1', namespaced: false, plural: 'namespaces' },
  Secret: { apiVersion: 'v1', namespaced: true, plural: 'secrets' },
};

/** `namespace/name` for namespaced objects, `name` for cluster-scoped ones. */
export function objectKey(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}
