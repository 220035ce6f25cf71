import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { DEFAULT_SSH_METRIC_NAME } from '../../src/bastion/ssh-tracker.ts';

/** Ports, paths and volume names of the bastion pod (SPEC §2.3, §12, §15.4). */
export const BASTION = {
  sshdPort: 2222,
  metricsPort: 9090,
  sshdUser: 'bastion',
  sshdKeysMount: '/home/bastion/.ssh',
  hostKeysMount: '/host-keys',
  keysSidecarMount: '/auth-keys-vol',
  authorizedKeysPath: '/auth-keys-vol/authorized_keys',
  keysVolume: 'authorized-keys',
  hostKeysVolume: 'host-keys',
} as const;

export interface BastionDeploymentProps {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly selectorLabels: Record<string, string>;
  readonly serviceAccountName: string;
  /** sshd image: listens on 2222 as user bastion, StrictModes no, pubkey auth only, host keys from /host-keys. */
  readonly sshdImage: string;
  /** Image holding `crownlabs` (this project): runs the bastion-keys and ssh-tracker sidecars. */
  readonly composerImage: string;
  /** Secret holding the sshd host keys. */
  readonly hostKeysSecretName: string;
  /** Default 1. */
  readonly replicas?: number;
  /** Counter name of the tracker. Default `bastion_ssh_connections`. */
  readonly metricName?: string;
}

/**
 * The bastion Deployment: sshd and the authorized_keys sidecar share an emptyDir (sshd sees it at
 * /home/bastion/.ssh, the sidecar at /auth-keys-vol, SPEC §2.3); the SSH tracker sidecar shares the
 * pod's network namespace, so it sees every connection sshd opens to an instance. It captures with
 * CAP_NET_RAW (and NET_ADMIN, as upstream's Helm chart grants) and drops every other capability.
 */
export class BastionDeployment extends Construct {
  constructor(scope: Construct, id: string, props: BastionDeploymentProps) {
    super(scope, id);
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name: props.name, namespace: props.namespace, labels: props.labels },
      spec: {
        replicas: props.replicas ?? 1,
        selector: { matchLabels: props.selectorLabels },
        template: {
          metadata: { labels: { ...props.labels, ...props.selectorLabels } },
          spec: {
            serviceAccountName: props.serviceAccountName,
            volumes: [
              { name: BASTION.keysVolume, emptyDir: {} },
              { name: BASTION.hostKeysVolume, secret: { secretName: props.hostKeysSecretName, defaultMode: 0o400 } },
            ],
            containers: [
              {
                name: 'sshd',
                image: props.sshdImage,
                ports: [{ name: 'ssh', containerPort: BASTION.sshdPort, protocol: 'TCP' }],
                volumeMounts: [
                  { name: BASTION.keysVolume, mountPath: BASTION.sshdKeysMount },
                  { name: BASTION.hostKeysVolume, mountPath: BASTION.hostKeysMount, readOnly: true },
                ],
                readinessProbe: { tcpSocket: { port: k8s.IntOrString.fromNumber(BASTION.sshdPort) } },
              },
              {
                name: 'bastion-keys',
                image: props.composerImage,
                args: ['bastion-keys'],
                env: [{ name: 'AUTHORIZED_KEYS_PATH', value: BASTION.authorizedKeysPath }],
                volumeMounts: [{ name: BASTION.keysVolume, mountPath: BASTION.keysSidecarMount }],
                securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
              },
              {
                name: 'ssh-tracker',
                image: props.composerImage,
                args: ['ssh-tracker', '--metrics-addr', `:${BASTION.metricsPort}`, '--ssh-tracker-metric-name', props.metricName ?? DEFAULT_SSH_METRIC_NAME],
                ports: [{ name: 'metrics', containerPort: BASTION.metricsPort, protocol: 'TCP' }],
                securityContext: {
                  allowPrivilegeEscalation: false,
                  capabilities: { add: ['NET_RAW', 'NET_ADMIN'], drop: ['ALL'] },
                },
                livenessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('metrics') }, periodSeconds: 10, failureThreshold: 3 },
                readinessProbe: { httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('metrics') } },
              },
            ],
          },
        },
      },
    });
  }
}
