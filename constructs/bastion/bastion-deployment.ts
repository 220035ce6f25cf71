import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { DEFAULT_SSH_METRIC_NAME } from '../../src/model/ssh-tracker-metric.ts';
import { containerSecurity, TMP_MOUNT, TMP_VOLUME } from '../platform/restricted-pod-security.ts';

/** Ports, paths and volume names of the bastion pod (docs/behaviour.md §2.3, §12, §15.4). */
export const BASTION = {
  sshdPort: 2222,
  metricsPort: 9090,
  /** The tracker's container: Prometheus labels its series `container="ssh-tracker"`. */
  trackerContainer: 'ssh-tracker',
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
  /**
   * Replicas of the Deployment.
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Counter name of the tracker.
   * @default `bastion_ssh_connections` (DEFAULT_SSH_METRIC_NAME)
   */
  readonly metricName?: string;
  /**
   * Lock the pod down (the platform install): our sidecars run as non-root with a read-only root
   * filesystem; the tracker keeps NET_RAW/NET_ADMIN and may raise them through tcpdump's file
   * capabilities (the Dockerfile sets them), so it alone allows privilege escalation.
   * @default false: upstream's pod (our sidecars drop every capability but the tracker's, no other setting)
   */
  readonly hardened?: boolean;
}

/**
 * The bastion Deployment: sshd and the authorized_keys sidecar share an emptyDir (sshd sees it at
 * /home/bastion/.ssh, the sidecar at /auth-keys-vol, docs/behaviour.md §2.3); the SSH tracker sidecar shares the
 * pod's network namespace, so it sees every connection sshd opens to an instance. It captures with
 * CAP_NET_RAW (and NET_ADMIN, as upstream's Helm chart grants) and drops every other capability.
 */
export class BastionDeployment extends Construct {
  constructor(scope: Construct, id: string, props: BastionDeploymentProps) {
    super(scope, id);
    const h = props.hardened;
    const ours = (add: string[] = []): k8s.SecurityContext =>
      h ? { ...containerSecurity(add), runAsNonRoot: true, runAsUser: 10001, runAsGroup: 10001, ...(add.length ? { allowPrivilegeEscalation: true } : {}) } : { allowPrivilegeEscalation: false, capabilities: add.length ? { add, drop: ['ALL'] } : { drop: ['ALL'] } };
    new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name: props.name, namespace: props.namespace, labels: props.labels },
      spec: {
        replicas: props.replicas ?? 1,
        selector: { matchLabels: props.selectorLabels },
        template: {
          metadata: { labels: { ...props.labels, ...props.selectorLabels } },
          spec: {
            serviceAccountName: props.serviceAccountName,
            ...(h ? { securityContext: { seccompProfile: { type: 'RuntimeDefault' }, fsGroup: 10001 } } : {}),
            volumes: [
              { name: BASTION.keysVolume, emptyDir: {} },
              { name: BASTION.hostKeysVolume, secret: { secretName: props.hostKeysSecretName, defaultMode: 0o400 } },
              ...(h ? [TMP_VOLUME] : []),
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
                // The sshd image runs as its own user `bastion`; nothing to add.
                ...(h ? { securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } } } : {}),
              },
              {
                name: 'bastion-keys',
                image: props.composerImage,
                args: ['bastion-keys'],
                env: [{ name: 'AUTHORIZED_KEYS_PATH', value: BASTION.authorizedKeysPath }],
                volumeMounts: [{ name: BASTION.keysVolume, mountPath: BASTION.keysSidecarMount }, ...(h ? [TMP_MOUNT] : [])],
                securityContext: ours(),
              },
              {
                name: BASTION.trackerContainer,
                image: props.composerImage,
                args: ['ssh-tracker', '--metrics-addr', `:${BASTION.metricsPort}`, '--ssh-tracker-metric-name', props.metricName ?? DEFAULT_SSH_METRIC_NAME],
                ports: [{ name: 'metrics', containerPort: BASTION.metricsPort, protocol: 'TCP' }],
                ...(h ? { volumeMounts: [TMP_MOUNT] } : {}),
                securityContext: ours(['NET_RAW', 'NET_ADMIN']),
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
