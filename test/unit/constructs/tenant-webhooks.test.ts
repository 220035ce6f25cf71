import { App, Chart } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { TenantWebhooks, type TenantWebhooksProps } from '../../../constructs/platform/tenant-webhooks.ts';
import { sharedValidator } from '../../../src/validate/validator.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const K = 'crownlabs.polito.it/operator-selector';
const targetLabel = { key: K, value: 'production' };

function render(props: TenantWebhooksProps): Any[] {
  const chart = new Chart(new App(), 'platform', { disableResourceNameHashes: true });
  new TenantWebhooks(chart, 'tenant-webhooks', props);
  return chart.toJson();
}
const RULES = [{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['tenants'], scope: 'Cluster' }];

describe('docs/behaviour.md §6 TenantWebhooks: the WebhookConfigurations', () => {
  it('in-cluster Service with cert-manager CA injection: the upstream chart shape', () => {
    const objects = render({ targetLabel, service: { namespace: 'crownlabs-system', name: 'crownlabs-webhooks' }, certManagerCertificate: 'crownlabs-system/crownlabs-webhooks' });
    expect(objects).toEqual([
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'crownlabs-tenant-webhook', annotations: { 'cert-manager.io/inject-ca-from': 'crownlabs-system/crownlabs-webhooks' } },
        webhooks: [
          {
            name: 'mutate.tenant.crownlabs.polito.it',
            admissionReviewVersions: ['v1'],
            clientConfig: { service: { namespace: 'crownlabs-system', name: 'crownlabs-webhooks', path: '/mutate-v1alpha2-tenant', port: 443 } },
            failurePolicy: 'Fail',
            rules: RULES,
            sideEffects: 'None',
          },
        ],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'crownlabs-tenant-webhook', annotations: { 'cert-manager.io/inject-ca-from': 'crownlabs-system/crownlabs-webhooks' } },
        webhooks: [
          {
            name: 'validate.tenant.crownlabs.polito.it',
            admissionReviewVersions: ['v1'],
            clientConfig: { service: { namespace: 'crownlabs-system', name: 'crownlabs-webhooks', path: '/validate-v1alpha2-tenant', port: 443 } },
            failurePolicy: 'Fail',
            objectSelector: { matchLabels: { [K]: 'production' } },
            rules: RULES,
            sideEffects: 'None',
          },
        ],
      },
    ]);
  });

  it('a URL with a CA bundle (server outside the cluster), a service port and a name prefix', () => {
    const [m, v] = render({ targetLabel: { key: K, value: 'staging' }, url: 'https://127.0.0.1:9443/', caBundle: 'Q0E=', namePrefix: 'shard-a-' });
    expect(m.metadata).toEqual({ name: 'shard-a-tenant-webhook' });
    expect(m.webhooks[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/mutate-v1alpha2-tenant', caBundle: 'Q0E=' });
    expect(v.webhooks[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/validate-v1alpha2-tenant', caBundle: 'Q0E=' });
    expect(v.webhooks[0].objectSelector).toEqual({ matchLabels: { [K]: 'staging' } });
    expect(m.webhooks[0].objectSelector).toBeUndefined();
    expect(render({ targetLabel, service: { namespace: 'n', name: 's', port: 8443 } })[0].webhooks[0].clientConfig.service.port).toBe(8443);
  });

  it('the rendered objects pass the Kubernetes schemas', () => {
    const validator = sharedValidator();
    for (const o of [...render({ targetLabel, url: 'https://127.0.0.1:9443', caBundle: 'Q0E=' }), ...render({ targetLabel, service: { namespace: 'n', name: 's' } })]) {
      expect(validator.validate(o), `${o.kind}`).toEqual([]);
    }
  });

  it('bad props are refused with a clear message', () => {
    expect(() => render({ targetLabel })).toThrow(/exactly one of `service` and `url`/);
    expect(() => render({ targetLabel, url: 'https://x', service: { namespace: 'n', name: 's' } })).toThrow(/exactly one/);
    expect(() => render({ targetLabel, url: 'http://127.0.0.1:9443' })).toThrow(/https:\/\//);
    expect(() => render({ targetLabel, url: 'https://x', certManagerCertificate: 'just-a-name' })).toThrow(/namespace\/name/);
  });
});
