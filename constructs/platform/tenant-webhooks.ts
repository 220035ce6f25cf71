import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { TENANT_WEBHOOK_NAMES, TENANT_WEBHOOK_PATHS } from '../../src/model/tenant-webhooks.ts';

/** cert-manager's CA injector fills `caBundle` from the Certificate this annotation names. */
export const CERT_MANAGER_INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

export interface TenantWebhooksProps {
  /**
   * The in-cluster Service in front of the controller's webhook port (`port` @default 443).
   * Exactly one of `service` and `url`.
   * @default none: `url` must be given
   */
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number };
  /**
   * Base URL of the webhook server (`https://host:port`), for a server outside the cluster; the paths are appended.
   * @default none: `service` must be given
   */
  readonly url?: string;
  /**
   * Base64 PEM of the CA that signed the serving certificate.
   * @default none: no `caBundle` (cert-manager injects it, or the API server's trust roots apply)
   */
  readonly caBundle?: string;
  /**
   * `namespace/name` of the cert-manager Certificate whose CA is injected (annotation `cert-manager.io/inject-ca-from`).
   * @default none: no annotation
   */
  readonly certManagerCertificate?: string;
  /**
   * Prefix of both configurations' names.
   * @default `crownlabs-` (→ `crownlabs-tenant-webhook`)
   */
  readonly namePrefix?: string;
}

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
    if ((props.service === undefined) === (props.url === undefined)) {
      throw new Error('TenantWebhooks: give exactly one of `service` and `url`');
    }
    if (props.url !== undefined && !/^https:\/\/[^/]/.test(props.url)) {
      throw new Error(`TenantWebhooks: url must be an https:// URL (the API server calls webhooks over TLS), not "${props.url}"`);
    }
    if (props.certManagerCertificate !== undefined && !/^[^/]+\/[^/]+$/.test(props.certManagerCertificate)) {
      throw new Error(`TenantWebhooks: certManagerCertificate must be "namespace/name", not "${props.certManagerCertificate}"`);
    }
    const name = `${props.namePrefix ?? 'crownlabs-'}tenant-webhook`;
    const metadata = {
      name,
      ...(props.certManagerCertificate ? { annotations: { [CERT_MANAGER_INJECT_CA_FROM]: props.certManagerCertificate } } : {}),
    };
    const clientConfig = (path: string): k8s.WebhookClientConfig => ({
      ...(props.service
        ? { service: { namespace: props.service.namespace, name: props.service.name, path, port: props.service.port ?? 443 } }
        : { url: `${props.url!.replace(/\/+$/, '')}${path}` }),
      ...(props.caBundle ? { caBundle: props.caBundle } : {}),
    });
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
