import { INPUT_KINDS } from '../inputs/types.ts';

/** REST plural and scope of every kind the controller reads or writes, keyed by `apiVersion/kind`. */
export interface KindResource {
  plural: string;
  namespaced: boolean;
}

const r = (plural: string, namespaced: boolean): KindResource => ({ plural, namespaced });

export const KIND_RESOURCES: Record<string, KindResource> = {
  'v1/Namespace': r('namespaces', false),
  'v1/Pod': r('pods', true),
  'v1/Secret': r('secrets', true),
  'v1/ConfigMap': r('configmaps', true),
  'v1/Service': r('services', true),
  'v1/ServiceAccount': r('serviceaccounts', true),
  'v1/PersistentVolumeClaim': r('persistentvolumeclaims', true),
  'v1/PersistentVolume': r('persistentvolumes', false),
  'v1/ResourceQuota': r('resourcequotas', true),
  'v1/LimitRange': r('limitranges', true),
  'v1/Event': r('events', true),
  'apps/v1/Deployment': r('deployments', true),
  'batch/v1/Job': r('jobs', true),
  'networking.k8s.io/v1/Ingress': r('ingresses', true),
  'networking.k8s.io/v1/NetworkPolicy': r('networkpolicies', true),
  'gateway.networking.k8s.io/v1/HTTPRoute': r('httproutes', true),
  'rbac.authorization.k8s.io/v1/ClusterRole': r('clusterroles', false),
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': r('clusterrolebindings', false),
  'rbac.authorization.k8s.io/v1/Role': r('roles', true),
  'rbac.authorization.k8s.io/v1/RoleBinding': r('rolebindings', true),
  'kubevirt.io/v1/VirtualMachine': r('virtualmachines', true),
  'kubevirt.io/v1/VirtualMachineInstance': r('virtualmachineinstances', true),
  'cdi.kubevirt.io/v1beta1/DataVolume': r('datavolumes', true),
  'coordination.k8s.io/v1/Lease': r('leases', true),
  'apiextensions.k8s.io/v1/CustomResourceDefinition': r('customresourcedefinitions', false),
  'crownlabs.polito.it/v1alpha2/Tenant': r('tenants', false),
  'crownlabs.polito.it/v1alpha1/Workspace': r('workspaces', false),
  'crownlabs.polito.it/v1alpha2/Template': r('templates', true),
  'crownlabs.polito.it/v1alpha2/Instance': r('instances', true),
  'crownlabs.polito.it/v1alpha2/InstanceSnapshot': r('instancesnapshots', true),
  'crownlabs.polito.it/v1alpha2/SharedVolume': r('sharedvolumes', true),
};

/**
 * API access a reconciler needs beyond what the rendered objects and the informers imply, declared
 * next to the code that makes the request (as kubebuilder's RBAC markers are), so the install's
 * derived role (src/platform/derive-rbac.ts) follows the code.
 */
export interface ApiAccess {
  readonly apiVersion: string;
  readonly kind: string;
  readonly subresource?: string;
  readonly verbs: readonly string[];
}

/** What an automation that relabels an Instance and records `status.automation` needs. */
export const INSTANCE_PATCH_ACCESS: readonly ApiAccess[] = [
  { apiVersion: INPUT_KINDS.Instance.apiVersion, kind: 'Instance', verbs: ['patch'] },
  { apiVersion: INPUT_KINDS.Instance.apiVersion, kind: 'Instance', subresource: 'status', verbs: ['patch'] },
];
