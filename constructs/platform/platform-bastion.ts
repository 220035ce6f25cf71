import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { BASTION, BastionDeployment } from '../bastion/bastion-deployment.ts';
import { BastionRbac } from '../bastion/bastion-rbac.ts';
import { BastionService } from '../bastion/bastion-service.ts';
import { LABEL } from '../../src/model/labels.ts';

/** The bastion's namespace, as upstream. */
export const BASTION_NAMESPACE = 'crownlabs-bastion';

export interface PlatformBastionProps {
  /** sshd image (see BastionDeployment). */
  readonly sshdImage: string;
  /** Image holding `crownlabs`: the keys and tracker sidecars. */
  readonly composerImage: string;
  /** Labels of every object besides the app ones. */
  readonly labels: Record<string, string>;
  /** Rules of the keys sidecar's ClusterRole (src/platform/derive-rbac.ts). */
  readonly rules: k8s.PolicyRule[];
}

/**
 * The SSH bastion of the install: its own namespace, the bastion constructs with the pod locked
 * down (`hardened`), a Service for the tracker's metrics and a PodDisruptionBudget. BastionChart
 * is the same bastion on its own, without them.
 */
export class PlatformBastion extends Construct {
  constructor(scope: Construct, id: string, props: PlatformBastionProps) {
    super(scope, id);
    const bns = BASTION_NAMESPACE;
    const name = 'ssh-bastion';
    const selectorLabels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/component': 'bastion' };
    const labels = { ...selectorLabels, ...props.labels };
    // Tenant NetworkPolicies admit namespaces with this label (docs/behaviour.md §5.4 row 7): without it, an enforcing CNI keeps the bastion from the VMs.
    new k8s.KubeNamespace(this, 'bastion-namespace', { metadata: { name: bns, labels: { ...props.labels, [LABEL.allowInstanceAccess]: 'true' } } });
    const rbac = new BastionRbac(this, 'bastion-rbac', { name, namespace: bns, labels, rules: props.rules });
    new BastionDeployment(this, 'bastion', {
      name,
      namespace: bns,
      labels,
      selectorLabels,
      serviceAccountName: rbac.serviceAccountName,
      sshdImage: props.sshdImage,
      composerImage: props.composerImage,
      hostKeysSecretName: `${name}-host-keys`,
      hardened: true,
    });
    new BastionService(this, 'bastion-service', { name, namespace: bns, labels, selectorLabels });
    new k8s.KubeService(this, 'bastion-metrics', {
      metadata: { name: `${name}-metrics`, namespace: bns, labels },
      spec: { selector: selectorLabels, ports: [{ name: 'metrics', port: BASTION.metricsPort, targetPort: k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }] },
    });
    new k8s.KubePodDisruptionBudget(this, 'bastion-pdb', {
      metadata: { name, namespace: bns, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selectorLabels } },
    });
  }
}
