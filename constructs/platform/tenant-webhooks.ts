import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { TENANT_WEBHOOK_NAMES, TENANT_WEBHOOK_PATHS } from '../../src/model/tenant-webhooks.ts';
import { webhookEndpoint, type WebhookEndpointProps } from './webhook-endpoint.ts';

export type TenantWebhooksProps = WebhookEndpointProps;

/**
 * The MutatingWebhookConfiguration and ValidatingWebhookConfiguration of the Tenant webhooks
 * (docs/behaviour.md §6, upstream's tenant-operator chart): CREATE and UPDATE of cluster-scoped v1alpha2 tenants,
 * failurePolicy Fail, no side effects, AdmissionReview v1. **Here** neither hook has an
 * objectSelector (upstream's validating one selects the target label): a Tenant without the label,
 * such as `service-tenant`, would be written unchecked, yet it can still name managers.
 */
export class TenantWebhooks extends Construct {
  readonly mutating: k8s.KubeMutatingWebhookConfiguration;
  readonly validating: k8s.KubeValidatingWebhookConfiguration;

  constructor(scope: Construct, id: string, props: TenantWebhooksProps) {
    super(scope, id);
    const { metadata, clientConfig } = webhookEndpoint('TenantWebhooks', props, 'tenant-webhook');
    const common = {
      failurePolicy: 'Fail',
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      rules: [
        {
          apiGroups: ['crownlabs.polito.it'],
          apiVersions: ['v1alpha2'],
          operations: ['CREATE', 'UPDATE'],
          resources: ['tenants'],
          scope: 'Cluster',
        },
      ],
    };
    this.mutating = new k8s.KubeMutatingWebhookConfiguration(this, 'mutating', {
      metadata,
      webhooks: [{ name: TENANT_WEBHOOK_NAMES.mutate, clientConfig: clientConfig(TENANT_WEBHOOK_PATHS.mutate), ...common }],
    });
    this.validating = new k8s.KubeValidatingWebhookConfiguration(this, 'validating', {
      metadata,
      webhooks: [
        {
          name: TENANT_WEBHOOK_NAMES.validate,
          clientConfig: clientConfig(TENANT_WEBHOOK_PATHS.validate),
          ...common,
        },
      ],
    });
  }
}
