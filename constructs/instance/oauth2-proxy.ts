import { createHmac } from 'node:crypto';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { MIN_SEED_LENGTH } from '../../src/config/keys.ts';
import { LABEL } from '../../src/model/labels.ts';
import { oauth2ProxyName } from '../../src/model/naming.ts';
import { INGRESS_TLS_SECRET } from './exposition.ts';
import { restrictiveSecurityContext } from './instance-pod-defaults.ts';
import type { Exposure, GatewayRef } from '../../src/model/exposition.ts';
import { HttpRoute } from './http-route.ts';

export const OAUTH2_PROXY_PORT = 4180;
const EMAILS_FILE = 'authenticated-emails';
const EMAILS_DIR = '/etc/oauth2-proxy';

export interface Oauth2ProxyProps {
  readonly environment: EnvironmentPlan;
  readonly instanceName: string;
  readonly namespace: string;
  readonly uid: string;
  readonly labels: Record<string, string>;
  /** The owner's and the workspace managers' e-mails: nobody else gets through. */
  readonly allowedEmails: readonly string[];
  readonly image: string;
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /**
   * Secret seed of the cookie secret; the secret itself is derived, so the composition stays pure.
   * Empty (only where Secret values are never written, e.g. the gitops tree): the value is empty.
   */
  readonly cookieSecretSeed: string;
  /** What exposes its callback path: an Ingress, an HTTPRoute, or both (as the GUI's). */
  readonly exposure: Exposure;
  /**
   * The Gateway the callback's HTTPRoute attaches to.
   * @default none: no HTTPRoute
   */
  readonly gateway?: GatewayRef;
}

/**
 * A per-instance oauth2-proxy (docs/behaviour.md Decision 2): Deployment, Service, the allowed e-mails and the
 * secrets, plus an Ingress for its own callback path. The instance Ingress sends the GUI through it.
 */
export class Oauth2Proxy extends Construct {
  readonly serviceName: string;

  constructor(scope: Construct, id: string, props: Oauth2ProxyProps) {
    super(scope, id);
    const env = props.environment;
    const name = oauth2ProxyName(env.name);
    this.serviceName = name;
    // Not the instance selector labels: the instance Service must not select the proxy's pods.
    const podLabels = { 'app.kubernetes.io/name': 'oauth2-proxy', 'app.kubernetes.io/instance': name, [LABEL.instance]: props.instanceName };
    const prefix = `${env.basePath}/oauth2`;

    new k8s.KubeConfigMap(this, 'emails', {
      metadata: { name, labels: props.labels },
      data: { [EMAILS_FILE]: `${props.allowedEmails.join('\n')}\n` },
    });
    new k8s.KubeSecret(this, 'secret', {
      metadata: { name, labels: props.labels },
      type: 'Opaque',
      stringData: {
        'cookie-secret': props.cookieSecretSeed ? deriveCookieSecret(props.cookieSecretSeed, props.uid, env.name) : '',
        'client-secret': props.clientSecret,
      },
    });
    const secretEnv = (envName: string, key: string) => ({ name: envName, valueFrom: { secretKeyRef: { name, key } } });
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name, labels: props.labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: podLabels },
        template: {
          metadata: { labels: podLabels },
          spec: {
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: { runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 },
            containers: [
              {
                name: 'oauth2-proxy',
                image: props.image,
                args: [
                  '--provider=oidc',
                  `--oidc-issuer-url=${props.issuerUrl}`,
                  `--client-id=${props.clientId}`,
                  `--http-address=0.0.0.0:${OAUTH2_PROXY_PORT}`,
                  `--upstream=http://${env.name}.${props.namespace}.svc:6080/`,
                  `--proxy-prefix=${prefix}`,
                  `--redirect-url=https://${env.host}${prefix}/callback`,
                  `--cookie-path=${env.basePath}`,
                  `--authenticated-emails-file=${EMAILS_DIR}/${EMAILS_FILE}`,
                  '--reverse-proxy=true',
                  '--skip-provider-button=true',
                ],
                env: [secretEnv('OAUTH2_PROXY_COOKIE_SECRET', 'cookie-secret'), secretEnv('OAUTH2_PROXY_CLIENT_SECRET', 'client-secret')],
                ports: [{ name: 'http', containerPort: OAUTH2_PROXY_PORT, protocol: 'TCP' }],
                readinessProbe: { httpGet: { path: '/ping', port: k8s.IntOrString.fromString('http') }, periodSeconds: 5 },
                resources: {
                  requests: { cpu: k8s.Quantity.fromString('10m'), memory: k8s.Quantity.fromString('32Mi') },
                  limits: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('128Mi') },
                },
                securityContext: { ...restrictiveSecurityContext(), readOnlyRootFilesystem: true },
                volumeMounts: [{ name: 'emails', mountPath: EMAILS_DIR, readOnly: true }],
              },
            ],
            volumes: [{ name: 'emails', configMap: { name } }],
          },
        },
      },
    });
    new k8s.KubeService(this, 'service', {
      metadata: { name, labels: props.labels },
      spec: {
        type: 'ClusterIP',
        selector: podLabels,
        ports: [{ name: 'http', port: OAUTH2_PROXY_PORT, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
      },
    });
    // The callback path gets its own Ingress or route: a rewrite on the GUI's would mangle it.
    if (props.exposure.httpRoute && props.gateway) {
      new HttpRoute(this, 'http-route', { name, labels: props.labels, gateway: props.gateway, host: env.host, prefix, stripPrefix: false, backend: { serviceName: name, port: OAUTH2_PROXY_PORT } });
    }
    if (!props.exposure.ingress) return;
    new k8s.KubeIngress(this, 'ingress', {
      metadata: { name, labels: props.labels },
      spec: {
        tls: [{ hosts: [env.host], secretName: INGRESS_TLS_SECRET }],
        rules: [
          {
            host: env.host,
            http: { paths: [{ path: prefix, pathType: 'Prefix', backend: { service: { name, port: { name: 'http' } } } }] },
          },
        ],
      },
    });
  }
}

/** 32 hex characters (a 32-byte secret, as oauth2-proxy requires), derived from the seed and UID. */
export function deriveCookieSecret(seed: string, uid: string, environmentName: string): string {
  // UIDs and names are public (paths, the gitops tree): without a secret seed anyone could compute it.
  if (seed.length < MIN_SEED_LENGTH) throw new Error(`cookie secret seed shorter than ${MIN_SEED_LENGTH} characters`);
  return createHmac('sha256', seed).update(`${uid}/${environmentName}`).digest('hex').slice(0, 32);
}
