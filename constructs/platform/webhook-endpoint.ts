import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';

/** cert-manager's CA injector fills `caBundle` from the Certificate this annotation names. */
export const CERT_MANAGER_INJECT_CA_FROM = 'cert-manager.io/inject-ca-from';

/** Where the API server sends the admission reviews of a webhook configuration, and how it trusts the server. */
export interface WebhookEndpointProps {
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
   * Prefix of the configurations' names.
   * @default `crownlabs-` (→ `crownlabs-tenant-webhook`)
   */
  readonly namePrefix?: string;
}

/** Checks the props (the construct's name in messages); returns the configuration's metadata and the client config of a path. */
export function webhookEndpoint(
  construct: string,
  props: WebhookEndpointProps,
  suffix: string,
): { metadata: k8s.ObjectMeta; clientConfig: (path: string) => k8s.WebhookClientConfig } {
  if ((props.service === undefined) === (props.url === undefined)) {
    throw new Error(`${construct}: give exactly one of \`service\` and \`url\``);
  }
  if (props.url !== undefined && !/^https:\/\/[^/]/.test(props.url)) {
    throw new Error(`${construct}: url must be an https:// URL (the API server calls webhooks over TLS), not "${props.url}"`);
  }
  if (props.certManagerCertificate !== undefined && !/^[^/]+\/[^/]+$/.test(props.certManagerCertificate)) {
    throw new Error(`${construct}: certManagerCertificate must be "namespace/name", not "${props.certManagerCertificate}"`);
  }
  const metadata = {
    name: `${props.namePrefix ?? 'crownlabs-'}${suffix}`,
    ...(props.certManagerCertificate ? { annotations: { [CERT_MANAGER_INJECT_CA_FROM]: props.certManagerCertificate } } : {}),
  };
  const clientConfig = (path: string): k8s.WebhookClientConfig => ({
    ...(props.service
      ? { service: { namespace: props.service.namespace, name: props.service.name, path, port: props.service.port ?? 443 } }
      : { url: `${props.url!.replace(/\/+$/, '')}${path}` }),
    ...(props.caBundle ? { caBundle: props.caBundle } : {}),
  });
  return { metadata, clientConfig };
}
