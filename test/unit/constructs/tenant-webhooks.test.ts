import { App, Chart } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { TenantWebhooks, type TenantWebhooksProps } from '../../../constructs/platform/tenant-webhooks.ts';
import { sharedValidator } from '../../../src/validate/validator.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

function render(props: TenantWebhooksProps): Any[] {
  const chart = new Chart(new App(), 'platform', { disableResourceNameHashes: true });
  new TenantWebhooks(chart, 'tenant-webhooks', props);
  return chart.toJson();
}
const RULES = [{ apiGroups: ['crownlabs.polito.it'], apiVersions: ['v1alpha2'], operations: ['CREATE', 'UPDATE'], resources: ['tenants'], scope: 'Cluster' }];

describe('docs/behaviour.md §6 TenantWebhooks: the WebhookConfigurations', () => {
  it('in-cluster Service with cert-manager CA injection: the upstream chart shape, with no objectSelector on either hook', () => {
    const objects = render({ service: { namespace: 'crownlabs-system', name: 'crownlabs-webhooks' }, certManagerCertificate: 'crownlabs-system/crownlabs-webhooks' });
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
            rules: RULES,
            sideEffects: 'None',
          },
        ],
      },
    ]);
  });

  it('a URL with a CA bundle (server outside the cluster), a service port and a name prefix', () => {
    const [m, v] = render({ url: 'https://127.0.0.1:9443/', caBundle: 'Q0E=', namePrefix: 'shard-a-' });
    expect(m.metadata).toEqual({ name: 'shard-a-tenant-webhook' });
    expect(m.webhooks[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/mutate-v1alpha2-tenant', caBundle: 'Q0E=' });
    expect(v.webhooks[0].clientConfig).toEqual({ url: 'https://127.0.0.1:9443/validate-v1alpha2-tenant', caBundle: 'Q0E=' });
    // Every Tenant write is validated: one without the target label (service-tenant) can still name managers.
    expect(v.webhooks[0].objectSelector).toBeUndefined();
    expect(m.webhooks[0].objectSelector).toBeUndefined();
    expect(render({ service: { namespace: 'n', name: 's', port: 8443 } })[0].webhooks[0].clientConfig.service.port).toBe(8443);
  });

  it('the rendered objects pass the Kubernetes schemas', () => {
    const validator = sharedValidator();
    for (const o of [...render({ url: 'https://127.0.0.1:9443', caBundle: 'Q0E=' }), ...render({ service: { namespace: 'n', name: 's' } })]) {
      expect(validator.validate(o), `${o.kind}`).toEqual([]);
    }
  });

  it('bad props are refused with a clear message', () => {
    expect(() => render({})).toThrow(/exactly one of `service` and `url`/);
    expect(() => render({ url: 'https://x', service: { namespace: 'n', name: 's' } })).toThrow(/exactly one/);
    expect(() => render({ url: 'http://127.0.0.1:9443' })).toThrow(/https:\/\//);
    expect(() => render({ url: 'https://x', certManagerCertificate: 'just-a-name' })).toThrow(/namespace\/name/);
  });
});
