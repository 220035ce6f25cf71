import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { GATEWAY_GROUP, type GatewayRef } from '../../src/model/exposition.ts';

/** The Secret (key `client-secret`, as Envoy Gateway reads it) holding the OIDC client secret. */
export const GATEWAY_OIDC_SECRET = 'crownlabs-gateway-oidc';

export interface GatewayAuthPolicyProps {
  readonly gateway: GatewayRef;
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly labels: Record<string, string>;
}

/**
 * The Envoy Gateway SecurityPolicy that authenticates every route of the Gateway with OIDC
 * (docs/behaviour.md §17): the Gateway API form of the shared auth mode, where nginx asks a
 * shared oauth2-proxy. It lives beside the Gateway, which a policy can only target in its own
 * namespace.
 */
export class GatewayAuthPolicy extends Construct {
  constructor(scope: Construct, id: string, props: GatewayAuthPolicyProps) {
    super(scope, id);
    new ApiObject(this, 'policy', {
      apiVersion: 'gateway.envoyproxy.io/v1alpha1',
      kind: 'SecurityPolicy',
      metadata: { name: 'crownlabs-instances-auth', namespace: props.gateway.namespace, labels: props.labels },
      spec: {
        targetRefs: [{ group: GATEWAY_GROUP, kind: 'Gateway', name: props.gateway.name }],
        oidc: {
          provider: { issuer: props.issuerUrl },
          clientID: props.clientId,
          clientSecret: { name: GATEWAY_OIDC_SECRET },
          // Envoy's request headers: the callback comes back to whichever host the route serves.
          redirectURL: '%REQ(x-forwarded-proto)%://%REQ(:authority)%/oauth2/callback',
          logoutPath: '/oauth2/logout',
        },
      },
    });
  }
}
