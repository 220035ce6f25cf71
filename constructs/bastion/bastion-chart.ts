import { Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { BastionDeployment } from './bastion-deployment.ts';
import { BastionRbac } from './bastion-rbac.ts';
import { BastionService } from './bastion-service.ts';

export interface BastionChartProps {
  /**
   * Namespace of the bastion.
   * @default `crownlabs-bastion`
   */
  readonly namespace?: string;
  /**
   * Name of every object.
   * @default `ssh-bastion`
   */
  readonly name?: string;
  /** sshd image (see BastionDeployment). */
  readonly sshdImage: string;
  /** Image holding `crownlabs`: the keys and tracker sidecars. */
  readonly composerImage: string;
  /**
   * Secret holding the sshd host keys.
   * @default `<name>-host-keys`
   */
  readonly hostKeysSecretName?: string;
  /**
   * Replicas of the Deployment.
   * @default 1
   */
  readonly replicas?: number;
  /**
   * Counter name of the SSH tracker.
   * @default `bastion_ssh_connections`
   */
  readonly metricName?: string;
  /**
   * Labels on every object besides the app ones (ours: parent and manager).
   * @default none: only the app labels
   */
  readonly chartLabels?: Record<string, string>;
}

/** The SSH bastion (docs/behaviour.md §12, §15.4, Decision 8): RBAC, the sshd Deployment with its two sidecars, the LoadBalancer Service. */
export class BastionChart extends Chart {
  constructor(scope: Construct, id: string, props: BastionChartProps) {
    const namespace = props.namespace ?? 'crownlabs-bastion';
    // No chart namespace: cdk8s would stamp it on the cluster-scoped ClusterRole and binding too.
    super(scope, id, { labels: props.chartLabels, disableResourceNameHashes: true });
    const name = props.name ?? 'ssh-bastion';
    const selectorLabels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'bastion' };
    const labels = { ...selectorLabels, 'app.kubernetes.io/part-of': 'crownlabs' };
    const rbac = new BastionRbac(this, 'rbac', { name, namespace, labels });
    new BastionDeployment(this, 'deployment', {
      name,
      namespace,
      labels,
      selectorLabels,
      serviceAccountName: rbac.serviceAccountName,
      sshdImage: props.sshdImage,
      composerImage: props.composerImage,
      hostKeysSecretName: props.hostKeysSecretName ?? `${name}-host-keys`,
      replicas: props.replicas,
      metricName: props.metricName,
    });
    new BastionService(this, 'service', { name, namespace, labels, selectorLabels });
  }
}
