import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { TEMPLATE_REF, TENANT_REF } from '../../src/inputs/types.ts';
import { INSTANCE_NAME_MESSAGES, MAX_INSTANCE_NAME_LENGTH, RESERVED_INSTANCE_NAMES } from '../../src/model/instance-names.ts';
import { LABEL } from '../../src/model/labels.ts';
import { tenantNamespaceName } from '../../src/model/naming.ts';
import { celList, denyingPolicy, exemptionMatchConditions, type ControllerPolicyProps } from './admission-exemptions.ts';

export type InstanceAdmissionPolicyProps = ControllerPolicyProps;

const POLICY_NAME = 'crownlabs-instance-admission';

/** A CEL string literal. */
const str = (s: string) => JSON.stringify(s);

/**
 * What a student or a workspace manager may not ask of an Instance (docs/behaviour.md §1.4), refused
 * by the API server before anything is stored:
 *
 * - a name longer than MAX_INSTANCE_NAME_LENGTH (its children could never be created), or one of
 *   RESERVED_INSTANCE_NAMES (a child would take an object of the tenant's own set), on CREATE;
 * - in a tenant namespace, a `tenantRef` other than the namespace's owner (it labels the children,
 *   and selectors are immutable), on CREATE and when it changes;
 * - a Template the requester may not read: for a student, one of a workspace she is not enrolled in
 *   (only its users and managers may read its Templates, docs/behaviour.md §4.2), on CREATE and when
 *   the reference changes.
 *
 * A ValidatingAdmissionPolicy like FrozenTemplatePolicy: in process, no certificate, in force while
 * the controller is down. The controller's own requests and the bypass groups are not checked.
 */
export class InstanceAdmissionPolicy extends Construct {
  readonly policy: ApiObject;
  readonly binding: ApiObject;

  constructor(scope: Construct, id: string, props: InstanceAdmissionPolicyProps) {
    super(scope, id);
    if (props.writers.length === 0) throw new Error('InstanceAdmissionPolicy: at least one writer (the controller) is needed');
    const name = props.name ?? POLICY_NAME;
    // Instances are read as plain maps: the reference keys are indexed, not selected.
    const ref = (o: string, key: string) => `${o}.spec[${str(key)}]`;
    const labels = 'namespaceObject.metadata.labels';
    // tenantNamespaceName(t) is the prefix and canon(t) (every '.' turned into '-').
    const prefix = tenantNamespaceName('');
    const tenantField = `spec[${str(TENANT_REF)}].name`;
    const templateField = `spec[${str(TEMPLATE_REF)}]`;
    ({ policy: this.policy, binding: this.binding } = denyingPolicy(
      this,
      { policy: 'policy', binding: 'binding' },
      name,
      props.labels,
      {
        matchConstraints: {
          resourceRules: [{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['instances'] }],
        },
        matchConditions: exemptionMatchConditions(props.writers, props.bypassGroups),
        variables: [
          { name: 'creating', expression: "request.operation == 'CREATE'" },
          { name: 'tenant', expression: `${ref('object', TENANT_REF)}.name` },
          // The Tenant named by a tenant namespace's labels (docs/behaviour.md §5.4 row 1), '' elsewhere.
          {
            name: 'owner',
            expression: `has(${labels}) && ${str(LABEL.type)} in ${labels} && ${labels}[${str(LABEL.type)}] == 'tenant' && ${str(LABEL.name)} in ${labels} ? ${labels}[${str(LABEL.name)}] : ''`,
          },
          // Unlabelled, a namespace named like a tenant namespace is that Tenant's by its name.
          {
            name: 'tenantFits',
            expression: `variables.owner != '' ? variables.tenant == variables.owner : (!namespaceObject.metadata.name.startsWith(${str(prefix)}) || namespaceObject.metadata.name == ${str(prefix)} + variables.tenant.replace('.', '-'))`,
          },
          { name: 'tenantChanged', expression: `variables.creating || ${ref('oldObject', TENANT_REF)}.name != variables.tenant` },
          { name: 'templateName', expression: `${ref('object', TEMPLATE_REF)}.name` },
          // `namespace` is a CEL reserved word: indexed too.
          { name: 'templateNamespace', expression: `'namespace' in ${ref('object', TEMPLATE_REF)} ? ${ref('object', TEMPLATE_REF)}['namespace'] : ''` },
          {
            name: 'templateChanged',
            expression: `variables.creating || ${ref('oldObject', TEMPLATE_REF)}.name != variables.templateName || ('namespace' in ${ref('oldObject', TEMPLATE_REF)} ? ${ref('oldObject', TEMPLATE_REF)}['namespace'] : '') != variables.templateNamespace`,
          },
        ],
        validations: [
          {
            expression: `!variables.creating || size(object.metadata.name) <= ${MAX_INSTANCE_NAME_LENGTH}`,
            reason: 'Invalid',
            messageExpression: `${str(`metadata.name: ${INSTANCE_NAME_MESSAGES.tooLong} (this one has `)} + string(size(object.metadata.name)) + ')'`,
          },
          {
            expression: `!variables.creating || !(object.metadata.name.replace('.', '-') in ${celList(RESERVED_INSTANCE_NAMES)})`,
            reason: 'Invalid',
            messageExpression: `'metadata.name: "' + object.metadata.name + ${str(`" ${INSTANCE_NAME_MESSAGES.reserved}`)}`,
          },
          {
            expression: '!variables.tenantChanged || variables.tenantFits',
            reason: 'Forbidden',
            messageExpression: `${str(`${tenantField}: `)} + variables.tenant + ' is not the owner of namespace ' + namespaceObject.metadata.name + (variables.owner != '' ? ' (Tenant ' + variables.owner + ')' : '') + ': an Instance in a tenant namespace belongs to its Tenant'`,
          },
          {
            expression: `!variables.templateChanged || authorizer.group('crownlabs.polito.it').resource('templates').namespace(variables.templateNamespace).name(variables.templateName).check('get').allowed()`,
            reason: 'Forbidden',
            messageExpression: `${str(`${templateField}: `)} + request.userInfo.username + ' may not read Template ' + variables.templateNamespace + '/' + variables.templateName + ': only the users and managers of its workspace may run it'`,
          },
        ],
      },
    ));
  }
}
