import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { containerSecurity, POD_SECURITY, TMP_MOUNT, TMP_VOLUME } from './restricted-pod-security.ts';

export interface ImageListUpdaterProps {
  readonly namespace: string;
  /** Image holding `crownlabs` (this project). */
  readonly image: string;
  /** Labels of every object besides the app ones. */
  readonly labels: Record<string, string>;
  /** Secret holding `registryUsername` / `registryPassword` (each optional). */
  readonly secretName: string;
  /** Docker Registry v2 base URL (`--registry-url`). */
  readonly registryUrl: string;
  /** ImageList the updater writes (`--image-list-name`). */
  readonly imageListName: string;
  /** Registry name written into the ImageList (`--advertised-registry-name`). */
  readonly advertisedRegistryName: string;
  readonly updateIntervalSeconds: number;
  /** Rules of its ClusterRole (src/platform/derive-rbac.ts: the one ImageList). */
  readonly rules: k8s.PolicyRule[];
}

/** `crownlabs imagelist` as a Deployment: ServiceAccount, ClusterRole and binding, one locked-down replica. */
export class ImageListUpdater extends Construct {
  static readonly NAME = 'crownlabs-imagelist-updater';
  constructor(scope: Construct, id: string, props: ImageListUpdaterProps) {
    super(scope, id);
    const ns = props.namespace;
    const name = ImageListUpdater.NAME;
    const selector = { 'app.kubernetes.io/name': name };
    const labels = { ...props.labels, ...selector, 'app.kubernetes.io/component': 'imagelist-updater' };
    new k8s.KubeServiceAccount(this, 'imagelist-sa', { metadata: { name, namespace: ns, labels } });
    new k8s.KubeClusterRole(this, 'imagelist-role', { metadata: { name, labels }, rules: props.rules });
    new k8s.KubeClusterRoleBinding(this, 'imagelist-binding', {
      metadata: { name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: ns }],
    });
    const secretEnv = (envName: string, key: string): k8s.EnvVar => ({ name: envName, valueFrom: { secretKeyRef: { name: props.secretName, key, optional: true } } });
    new k8s.KubeDeployment(this, 'imagelist', {
      metadata: { name, namespace: ns, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: name,
            securityContext: POD_SECURITY,
            volumes: [TMP_VOLUME],
            containers: [
              {
                name: 'imagelist',
                image: props.image,
                args: ['imagelist', '--advertised-registry-name', props.advertisedRegistryName, '--image-list-name', props.imageListName, '--registry-url', props.registryUrl, '--update-interval', String(props.updateIntervalSeconds)],
                env: [secretEnv('CROWNLABS_REGISTRY_USERNAME', 'registryUsername'), secretEnv('CROWNLABS_REGISTRY_PASSWORD', 'registryPassword')],
                resources: { requests: { cpu: k8s.Quantity.fromString('20m'), memory: k8s.Quantity.fromString('128Mi') }, limits: { memory: k8s.Quantity.fromString('256Mi') } },
                volumeMounts: [TMP_MOUNT],
                securityContext: containerSecurity(),
              },
            ],
          },
        },
      },
    });
  }
}
