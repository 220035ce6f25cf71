import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { exposure as exposureOf, type Exposure, type GatewayRef } from '../../src/model/exposition.ts';
import { LABEL } from '../../src/model/labels.ts';
import { GUI_PORT } from '../../src/model/level-rendering.ts';
import { HttpRoute } from './http-route.ts';

/** TLS Secret every instance namespace holds (docs/behaviour.md §3). */
export const INGRESS_TLS_SECRET = 'crownlabs-ingress-secret';

export interface ExpositionProps {
  readonly environment: EnvironmentPlan;
  readonly labels: Record<string, string>;
  readonly selectorLabels: Record<string, string>;
  /**
   * nginx external-auth annotations (shared auth mode), merged into the Ingress.
   * @default none: the Ingress carries only its own annotations
   */
  readonly authAnnotations?: Record<string, string>;
  /**
   * Route the GUI through this Service's port (per-instance oauth2-proxy).
   * @default the environment's own Service, port `gui` (`N:gui`)
   */
  readonly backendOverride?: { serviceName: string; portName: string; port: number };
  /**
   * What exposes the route: an Ingress, an HTTPRoute, or both.
   * @default an Ingress only
   */
  readonly exposure?: Exposure;
  /**
   * The Gateway an HTTPRoute attaches to.
   * @default none: no HTTPRoute, whatever `exposure` says
   */
  readonly gateway?: GatewayRef;
}

/**
 * Service `N` (when it has a port) and, for a GUI, Ingress `N-gui` / `N-app` of a running environment
 * (docs/behaviour.md §7.3), or an HTTPRoute of the same name, or both (§17).
 * Render it only while the Instance runs: stopping removes both (docs/behaviour.md Decision 4 fixes the
 * Standalone `-app` Ingress that upstream leaves behind).
 */
export class Exposition extends Construct {
  constructor(scope: Construct, id: string, props: ExpositionProps) {
    super(scope, id);
    const env = props.environment;
    // The API server refuses a ClusterIP Service without ports (spec.ports: Required value); a GUI
    // always adds port `gui`, so no Ingress ever points at a Service left out here.
    if (env.servicePorts.length === 0) return;
    new k8s.KubeService(this, 'service', {
      metadata: {
        name: env.name,
        labels: env.isContainer ? { ...props.labels, [LABEL.metricsEnabled]: 'true' } : props.labels,
      },
      spec: {
        type: 'ClusterIP',
        ...(env.headlessService ? { clusterIp: 'None' } : {}),
        selector: props.selectorLabels,
        ports: env.servicePorts.map((p) => ({ name: p.name, port: p.port, targetPort: k8s.IntOrString.fromNumber(p.port), protocol: 'TCP' })),
      },
    });
    const route = env.route;
    if (!route) return;
    const annotations: Record<string, string> = {
      'nginx.ingress.kubernetes.io/proxy-read-timeout': '3600',
      'nginx.ingress.kubernetes.io/proxy-send-timeout': '3600',
      ...(route.rewriteTarget ? { 'nginx.ingress.kubernetes.io/rewrite-target': route.rewriteTarget } : {}),
      ...props.authAnnotations,
    };
    const backend = props.backendOverride ?? { serviceName: env.name, portName: 'gui', port: GUI_PORT };
    const exposure = props.exposure ?? exposureOf('ingress');
    if (exposure.httpRoute && props.gateway) {
      new HttpRoute(this, 'http-route', {
        name: route.ingressName,
        labels: props.labels,
        gateway: props.gateway,
        host: env.host,
        prefix: route.prefix,
        stripPrefix: route.stripPrefix,
        backend: { serviceName: backend.serviceName, port: backend.port },
      });
    }
    if (!exposure.ingress) return;
    new k8s.KubeIngress(this, 'ingress', {
      metadata: { name: route.ingressName, labels: props.labels, annotations },
      spec: {
        tls: [{ hosts: [env.host], secretName: INGRESS_TLS_SECRET }],
        rules: [
          {
            host: env.host,
            http: {
              paths: [
                {
                  path: route.path,
                  pathType: 'Prefix',
                  backend: { service: { name: backend.serviceName, port: { name: backend.portName } } },
                },
              ],
            },
          },
        ],
      },
    });
  }
}

/** nginx external-auth annotations pointing at a shared oauth2-proxy (docs/behaviour.md §7.3, Standard mode). */
export function sharedAuthAnnotations(instancesAuthUrl: string): Record<string, string> {
  return {
    'nginx.ingress.kubernetes.io/auth-url': `${instancesAuthUrl}/auth`,
    'nginx.ingress.kubernetes.io/auth-signin': `${instancesAuthUrl}/start?rd=$escaped_request_uri`,
  };
}
