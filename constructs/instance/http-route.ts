import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { GATEWAY_GROUP, HTTP_ROUTE_API_VERSION, type GatewayRef } from '../../src/model/exposition.ts';

/** As the nginx Ingress's proxy read and send timeouts: a noVNC session is one long request. */
const ROUTE_TIMEOUT = '3600s';

export interface HttpRouteProps {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly gateway: GatewayRef;
  readonly host: string;
  readonly prefix: string;
  /** Drop the matched prefix (the Ingress's rewrite-target): `<prefix>/a` is sent as `/a`, `<prefix>` as `/`. */
  readonly stripPrefix: boolean;
  readonly backend: { serviceName: string; port: number };
}

/**
 * A Gateway API HTTPRoute (gateway.networking.k8s.io/v1) with one rule: what an instance Ingress
 * routes, attached to the configured Gateway (docs/behaviour.md §17).
 */
export class HttpRoute extends Construct {
  constructor(scope: Construct, id: string, props: HttpRouteProps) {
    super(scope, id);
    new ApiObject(this, 'route', {
      apiVersion: HTTP_ROUTE_API_VERSION,
      kind: 'HTTPRoute',
      metadata: { name: props.name, labels: props.labels },
      spec: {
        parentRefs: [{ group: GATEWAY_GROUP, kind: 'Gateway', namespace: props.gateway.namespace, name: props.gateway.name }],
        hostnames: [props.host],
        rules: [
          {
            matches: [{ path: { type: 'PathPrefix', value: props.prefix } }],
            ...(props.stripPrefix ? { filters: [{ type: 'URLRewrite', urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '' } } }] } : {}),
            backendRefs: [{ group: '', kind: 'Service', name: props.backend.serviceName, port: props.backend.port }],
            timeouts: { request: ROUTE_TIMEOUT, backendRequest: ROUTE_TIMEOUT },
          },
        ],
      },
    });
  }
}
