import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { COMPOSER, LABEL } from '../../src/model/labels.ts';
import { bypassGroupsCondition, celList, denyingPolicy } from './admission-exemptions.ts';

export interface ComposerLabelPolicyProps {
  /** The namespaced resources checked, by API group: those the controller watches by our label (src/platform/install.ts). */
  readonly resources: readonly { readonly group: string; readonly resources: readonly string[] }[];
  /**
   * Users who may write our marks there: the controller's ServiceAccount(s) and whoever else
   * renders our objects into such namespaces (Argo CD's application controller in gitops mode),
   * `system:serviceaccount:<ns>:<name>`.
   */
  readonly writers: readonly string[];
  /**
   * Groups whose requests are not checked (cluster administrators, a backup restore).
   * @default ['system:masters']
   */
  readonly bypassGroups?: readonly string[];
  /**
   * Namespaces the policy applies to (a binding's namespaceSelector).
   * @default notOurNamespaces(): every namespace but the tenant and workspace namespaces and the MyDrive claims' one
   */
  readonly namespaceSelector?: Record<string, unknown>;
  /** Where the Tenants' MyDrive claims live (`mydrivePvcsNamespace`): written by us and the PV binder, not by tenants. */
  readonly mydrivePvcsNamespace: string;
  /**
   * Name of the policy and of its binding.
   * @default `crownlabs-composer-labels`
   */
  readonly name?: string;
  /**
   * Labels of both objects.
   * @default none
   */
  readonly labels?: Record<string, string>;
}

const POLICY_NAME = 'crownlabs-composer-labels';

/**
 * Every namespace but the tenant and workspace ones (where only we, or Argo CD from our tree,
 * write, and tenants only Instances) and the MyDrive claims' one. Sandboxes are in.
 */
export function notOurNamespaces(mydrivePvcsNamespace: string): { matchExpressions: { key: string; operator: string; values: string[] }[] } {
  return {
    matchExpressions: [
      { key: LABEL.type, operator: 'NotIn', values: ['tenant', 'workspace'] },
      { key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: [mydrivePvcsNamespace] },
    ],
  };
}

/**
 * Only the controller may put our managed-by label or parent annotation on an object outside
 * the namespaces we render for tenants and workspaces (docs/behaviour.md §0.8): in a sandbox, where
 * the tenant has edit rights, or in any namespace not ours. The controller watches objects by that
 * label cluster-wide; without this, anyone with write access somewhere could make it cache their
 * objects, or name a parent for it to reconcile.
 *
 * A create or update of an object that carries either mark, or carried one, is refused: what we
 * render there (a sandbox's RoleBinding, quota and limits) is the controller's to change, also
 * where the tenant's role lets her edit its kind. The cluster's own controllers (kube-system
 * ServiceAccounts: the garbage collector removing a finalizer) are not checked. A
 * ValidatingAdmissionPolicy: checked in the API server, it holds while the controller is down.
 */
export class ComposerLabelPolicy extends Construct {
  readonly policy: ApiObject;
  readonly binding: ApiObject;

  constructor(scope: Construct, id: string, props: ComposerLabelPolicyProps) {
    super(scope, id);
    if (props.writers.length === 0) throw new Error('ComposerLabelPolicy: at least one writer (the controller) is needed');
    const name = props.name ?? POLICY_NAME;
    // A label's or annotation's value in an object, '' when absent (CEL has no undefined).
    const valueIn = (o: string, field: 'labels' | 'annotations', key: string) =>
      `has(${o}.metadata.${field}) && ${JSON.stringify(key)} in ${o}.metadata.${field} ? ${o}.metadata.${field}[${JSON.stringify(key)}] : ''`;
    const before = (expr: string) => `oldObject == null ? '' : (${expr})`;
    const ours = JSON.stringify(COMPOSER.managedByValue);
    ({ policy: this.policy, binding: this.binding } = denyingPolicy(
      this,
      { policy: 'policy', binding: 'binding' },
      name,
      props.labels,
      {
        matchConstraints: {
          resourceRules: props.resources.map(({ group, resources }) => ({ apiGroups: [group], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [...resources], scope: 'Namespaced' })),
        },
        matchConditions: [
          { name: 'not-a-writer', expression: `!(request.userInfo.username in ${celList(props.writers)})` },
          bypassGroupsCondition(props.bypassGroups),
          { name: 'not-a-cluster-controller', expression: `!(request.userInfo.username.startsWith('system:serviceaccount:kube-system:') || request.userInfo.username == 'system:kube-controller-manager')` },
        ],
        variables: [
          // Our value only: another tool's managed-by label is none of our business.
          { name: 'managed', expression: `(${valueIn('object', 'labels', COMPOSER.managedByKey)}) == ${ours}` },
          { name: 'parent', expression: valueIn('object', 'annotations', COMPOSER.parentAnnotation) },
          { name: 'managedBefore', expression: `(${before(valueIn('oldObject', 'labels', COMPOSER.managedByKey))}) == ${ours}` },
          { name: 'parentBefore', expression: before(valueIn('oldObject', 'annotations', COMPOSER.parentAnnotation)) },
        ],
        validations: [
          {
            expression: `!variables.managed && variables.parent == '' && !variables.managedBefore && variables.parentBefore == ''`,
            reason: 'Forbidden',
            message: `the label ${COMPOSER.managedByKey}=${COMPOSER.managedByValue} and the annotation ${COMPOSER.parentAnnotation} are written by the crownlabs-composer controller only`,
          },
        ],
      },
      { matchResources: { namespaceSelector: props.namespaceSelector ?? notOurNamespaces(props.mydrivePvcsNamespace) } },
    ));
  }
}
