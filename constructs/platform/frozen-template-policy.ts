import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { denyingPolicy, exemptionMatchConditions, type ControllerPolicyProps } from './admission-exemptions.ts';

/** `writers`: who may write the annotation, the controller's ServiceAccount(s). */
export type FrozenTemplatePolicyProps = ControllerPolicyProps;

const POLICY_NAME = 'crownlabs-instance-frozen-template';

/**
 * Only the controller may set, change or remove an Instance's frozen Template spec
 * (docs/behaviour.md Decision 3). The controller renders an Instance from that annotation, not
 * from the live Template, and tenants may edit their own Instances: without this, a tenant could
 * write any image, resources or environment type into it and have the controller run them.
 *
 * A ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, Kubernetes ≥ 1.30) rather than a
 * webhook: the API server checks it in process, so it needs no serving certificate and holds even
 * while the controller is down. Every other field of an Instance stays as editable as before.
 */
export class FrozenTemplatePolicy extends Construct {
  readonly policy: ApiObject;
  readonly binding: ApiObject;

  constructor(scope: Construct, id: string, props: FrozenTemplatePolicyProps) {
    super(scope, id);
    if (props.writers.length === 0) throw new Error('FrozenTemplatePolicy: at least one writer (the controller) is needed');
    const name = props.name ?? POLICY_NAME;
    const key = JSON.stringify(FROZEN_TEMPLATE_ANNOTATION);
    // The annotation's value in an object, '' when absent (CEL has no undefined).
    const valueIn = (o: string) => `has(${o}.metadata.annotations) && ${key} in ${o}.metadata.annotations ? ${o}.metadata.annotations[${key}] : ''`;
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
          { name: 'frozen', expression: valueIn('object') },
          { name: 'before', expression: `oldObject == null ? '' : (${valueIn('oldObject')})` },
        ],
        validations: [
          {
            expression: 'variables.frozen == variables.before',
            reason: 'Forbidden',
            message: `metadata.annotations[${key}] is written by the crownlabs-composer controller only`,
          },
        ],
      },
    ));
  }
}
