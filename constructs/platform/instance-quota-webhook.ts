import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { INSTANCE_WEBHOOK_NAME, INSTANCE_WEBHOOK_PATH } from '../../src/model/tenant-webhooks.ts';
import { webhookEndpoint, type WebhookEndpointProps } from './webhook-endpoint.ts';

export interface InstanceQuotaWebhookProps extends WebhookEndpointProps {
  /** The shard's target label: the webhook sees the Instances of the namespaces that carry it. */
  readonly namespaceLabel: { readonly key: string; readonly value: string };
}

/**
 * The ValidatingWebhookConfiguration of the Instance quota webhook (docs/behaviour.md §16.6,
 * upstream's operator chart): CREATE and UPDATE of namespaced v1alpha2 instances in the shard's
 * namespaces, failurePolicy Fail. **Here** `sideEffects: NoneOnDryRun`, since an admission writes
 * the quota ledger (none on a dry run), and the longest timeout, since one tenant's requests are
 * judged one after the other.
 */
export class InstanceQuotaWebhook extends Construct {
  readonly validating: k8s.KubeValidatingWebhookConfiguration;

  constructor(scope: Construct, id: string, props: InstanceQuotaWebhookProps) {
    super(scope, id);
    const { metadata, clientConfig } = webhookEndpoint('InstanceQuotaWebhook', props, 'instance-webhook');
    this.validating = new k8s.KubeValidatingWebhookConfiguration(this, 'validating', {
      metadata,
      webhooks: [
        {
          name: INSTANCE_WEBHOOK_NAME,
          clientConfig: clientConfig(INSTANCE_WEBHOOK_PATH),
          failurePolicy: 'Fail',
          sideEffects: 'NoneOnDryRun',
          timeoutSeconds: 30,
          admissionReviewVersions: ['v1'],
          namespaceSelector: { matchLabels: { [props.namespaceLabel.key]: props.namespaceLabel.value } },
          rules: [{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['instances'], scope: 'Namespaced' }],
        },
      ],
    });
  }
}
