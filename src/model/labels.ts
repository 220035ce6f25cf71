import type { LabelSelector } from '../config/config.ts';
import { createHash } from 'node:crypto';

/** CrownLabs label keys (docs/behaviour.md §0.5). */
export const LABEL = {
  managedBy: 'crownlabs.polito.it/managed-by',
  instance: 'crownlabs.polito.it/instance',
  template: 'crownlabs.polito.it/template',
  tenant: 'crownlabs.polito.it/tenant',
  workspace: 'crownlabs.polito.it/workspace',
  persistent: 'crownlabs.polito.it/persistent',
  /** e62be9e: whether the Instance's workloads have a node selector (docs/behaviour.md §16.3). */
  hasNodeSelector: 'crownlabs.polito.it/has-node-selector',
  component: 'crownlabs.polito.it/component',
  metricsEnabled: 'crownlabs.polito.it/metrics-enabled',
  type: 'crownlabs.polito.it/type',
  name: 'crownlabs.polito.it/name',
  /** Environment children at e62be9e (docs/behaviour.md §16.3). */
  environment: 'crownlabs.polito.it/environment',
  instanceResourcesReplication: 'crownlabs.polito.it/instance-resources-replication',
  noWorkspaces: 'crownlabs.polito.it/no-workspaces',
  firstName: 'crownlabs.polito.it/first-name',
  lastName: 'crownlabs.polito.it/last-name',
  workspacePrefix: 'crownlabs.polito.it/workspace-',
  /** e62be9e, on a Workspace: its autoEnroll, or `disabled` (docs/behaviour.md §16.4). */
  autoEnroll: 'crownlabs.polito.it/autoenroll',
  watchForInstanceTermination: 'crownlabs.polito.it/watch-for-instance-termination',
  instanceSubmissionRequested: 'crownlabs.polito.it/instance-submission-requested',
  instanceSubmissionCompleted: 'crownlabs.polito.it/instance-submission-completed',
  allowInstanceAccess: 'crownlabs.polito.it/allow-instance-access',
} as const;

/** Labels and annotations of our own, on every rendered object (docs/architecture.md, "Conventions"). */
export const COMPOSER = {
  managedByKey: 'app.kubernetes.io/managed-by',
  managedByValue: 'crownlabs-composer',
  /** Short hash of the parent's key: label values are limited to 63 characters. */
  parentIdLabel: 'composer.crownlabs.polito.it/parent-id',
  parentKindLabel: 'composer.crownlabs.polito.it/parent-kind',
  /** `Kind/namespace/name` of the input that produced the object, readable. */
  parentAnnotation: 'composer.crownlabs.polito.it/parent',
} as const;

export type ParentKind = 'Instance' | 'Tenant' | 'Workspace' | 'InstanceSnapshot' | 'SharedVolume' | 'Bastion' | 'Platform';

export interface ParentRef {
  kind: ParentKind;
  name: string;
  namespace?: string;
}

export function parentKey(p: ParentRef): string {
  return p.namespace ? `${p.kind}/${p.namespace}/${p.name}` : `${p.kind}/${p.name}`;
}

/** A stable 20-hex-digit id of a parent, usable as a label value and a label-selector index. */
export function parentId(p: ParentRef): string {
  return createHash('sha256').update(parentKey(p)).digest('hex').slice(0, 20);
}

export function composerLabels(p: ParentRef): Record<string, string> {
  return {
    [COMPOSER.managedByKey]: COMPOSER.managedByValue,
    [COMPOSER.parentKindLabel]: p.kind,
    [COMPOSER.parentIdLabel]: parentId(p),
  };
}

export function composerAnnotations(p: ParentRef): Record<string, string> {
  return { [COMPOSER.parentAnnotation]: parentKey(p) };
}

export interface InstanceIdentity {
  instanceName: string;
  templateName: string;
  tenantName: string;
}

/** Labels of the pods/VMIs of an Instance, and of the Deployment and Service selectors (docs/behaviour.md §0.5). */
export function instanceSelectorLabels(id: InstanceIdentity): Record<string, string> {
  return {
    [LABEL.instance]: id.instanceName,
    [LABEL.template]: id.templateName,
    [LABEL.tenant]: id.tenantName,
  };
}

/** Labels of every Instance child (docs/behaviour.md §0.5). */
export function instanceObjectLabels(id: InstanceIdentity): Record<string, string> {
  return { [LABEL.managedBy]: 'instance', ...instanceSelectorLabels(id) };
}

/** Labels of tenant children other than sandbox objects (docs/behaviour.md §5.2). */
export function tenantCommonLabels(target: LabelSelector): Record<string, string> {
  return { [target.key]: target.value, [LABEL.managedBy]: 'tenant' };
}

export function workspaceCommonLabels(target: LabelSelector): Record<string, string> {
  return { [target.key]: target.value, [LABEL.managedBy]: 'workspace' };
}

/** Whether `labels` hold every key/value of `required` (an empty requirement admits all). */
export function hasAllLabels(labels: Record<string, string> | undefined, required: Record<string, string>): boolean {
  return Object.entries(required).every(([k, v]) => labels?.[k] === v);
}
