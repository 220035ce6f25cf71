/**
 * The objects of the user pods API (seed 004), rendered by the constructs of constructs/user-pods:
 * the pod (and the user's storage it mounts) at create_pod, the Services, Ingress and token
 * Secret once the pod is Ready. Each call is one small cdk8s App.
 */
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { TokenSecret } from '../../constructs/user-pods/token-secret.ts';
import { UserPodIngress } from '../../constructs/user-pods/user-pod-ingress.ts';
import { UserPodServices } from '../../constructs/user-pods/user-pod-services.ts';
import { UserPod, usesUserStorage, type ManifestPodSpec } from '../../constructs/user-pods/user-pod.ts';
import { UserStorageClaim } from '../../constructs/user-pods/user-storage-claim.ts';
import { UserStorageVolume } from '../../constructs/user-pods/user-storage-volume.ts';
import type { KubeObject } from '../inputs/types.ts';
import { COMPOSER } from '../model/labels.ts';
import {
  CREATED_FOR_POD_LABEL,
  STORAGE_NAME_LABEL,
  USER_POD_ANNOTATION,
  USER_POD_LABEL,
  ingressPort,
  parseUserId,
  tokenSecretName,
  userPodLabels,
  userStorageName,
} from '../model/user-pods.ts';

/** Size the seed gives every user's storage PV and PVC. */
export const USER_STORAGE_SIZE = '10Gi';
const MANAGED = { [COMPOSER.managedByKey]: COMPOSER.managedByValue };

export interface UserPodRequest {
  podName: string;
  namespace: string;
  userId: string;
  /** The manifest pod (whitelisted, parsed): its annotations and spec are kept. */
  manifest: { metadata?: { annotations?: Record<string, string> }; spec: ManifestPodSpec };
  settings: Record<string, Record<string, string>>;
  /** The requester's silo IP (NFS server) and the hostname the hostname list gives it. */
  siloIp: string;
  siloHostname?: string;
  createDeadline: string;
  defaultRestartPolicy: string;
  localRegistryUrl: string;
  localRegistrySecret: string;
  nfsStorageRoot: string;
}

function render(build: (scope: Construct) => void): KubeObject[] {
  const app = new App();
  const chart = new Chart(app, 'userpod', { disableResourceNameHashes: true });
  build(chart);
  return chart.toJson() as KubeObject[];
}

/** The user pod and, when it mounts the `sciencedata` volume, the user's storage PV and PVC. */
export function renderUserPod(r: UserPodRequest): { pod: KubeObject; storage: KubeObject[] } {
  const mandatoryEnv: Record<string, string> = { SD_UID: r.userId, HOME_SERVER_IP: r.siloIp };
  if (r.siloHostname) mandatoryEnv.HOME_SERVER_HOSTNAME = r.siloHostname;
  let storage = false;
  const objects = render((scope) => {
    const pod = new UserPod(scope, 'pod', {
      name: r.podName,
      namespace: r.namespace,
      labels: { ...userPodLabels(r.userId, r.podName), ...MANAGED },
      annotations: {
        ...(r.manifest.metadata?.annotations ?? {}),
        [USER_POD_ANNOTATION.state]: 'creating',
        [USER_POD_ANNOTATION.createDeadline]: r.createDeadline,
        [USER_POD_ANNOTATION.siloIp]: r.siloIp,
      },
      manifestSpec: r.manifest.spec,
      settings: r.settings,
      mandatoryEnv,
      defaultRestartPolicy: r.defaultRestartPolicy,
      localRegistryUrl: r.localRegistryUrl,
      localRegistrySecret: r.localRegistrySecret,
      storageClaimName: userStorageName(r.userId),
    });
    storage = usesUserStorage(pod.spec);
    if (storage) {
      const name = userStorageName(r.userId);
      const u = parseUserId(r.userId);
      const labels = { [STORAGE_NAME_LABEL]: name, user: u.name, domain: u.domain, server: r.siloIp, ...MANAGED };
      new UserStorageVolume(scope, 'pv', { name, namespace: r.namespace, labels, nfsServer: r.siloIp, nfsPath: `${r.nfsStorageRoot}/${r.userId}`, size: USER_STORAGE_SIZE });
      new UserStorageClaim(scope, 'pvc', { name, namespace: r.namespace, labels, size: USER_STORAGE_SIZE });
    }
  });
  return { pod: objects.find((o) => o.kind === 'Pod')!, storage: objects.filter((o) => o.kind !== 'Pod') };
}

export interface LivePod {
  metadata: { name: string; namespace?: string; uid?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { containers: { ports?: { containerPort: number }[] }[] };
}

function ownerOf(pod: LivePod) {
  return [{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid! }];
}

/** The objects made once a pod is Ready: the SSH Service, the HTTP Service and its Ingress. */
export function renderStartObjects(pod: LivePod, opts: { namespace: string; ingressDomain: string; wildcardSecret: string }): KubeObject[] {
  const podName = pod.metadata.name;
  const labels = { [CREATED_FOR_POD_LABEL]: podName, ...MANAGED };
  const ssh = pod.spec.containers.some((c) => (c.ports ?? []).some((p) => p.containerPort === 22));
  const port = ingressPort(pod.metadata.annotations);
  // Selected by the pod's own owner labels (a pod made by the seed's backend keeps its).
  const keys: string[] = Object.values(USER_POD_LABEL);
  const podLabels = Object.fromEntries(Object.entries(pod.metadata.labels ?? {}).filter(([k]) => keys.includes(k)));
  return render((scope) => {
    const ownerReferences = ownerOf(pod);
    new UserPodServices(scope, 'services', { podName, namespace: opts.namespace, labels, selector: podLabels, ownerReferences, ssh, httpPort: port });
    if (port !== undefined) {
      new UserPodIngress(scope, 'ingress', { podName, namespace: opts.namespace, labels, ownerReferences, port, ingressDomain: opts.ingressDomain, wildcardSecret: opts.wildcardSecret });
    }
  });
}

/** The Secret holding the tokens copied from a pod (one key each of `sciencedata.dk/copy-token`). */
export function renderTokenSecret(pod: LivePod, namespace: string, tokens: Record<string, string>): KubeObject {
  return render((scope) => {
    new TokenSecret(scope, 'tokens', {
      name: tokenSecretName(pod.metadata.name),
      namespace,
      labels: { [CREATED_FOR_POD_LABEL]: pod.metadata.name, ...MANAGED },
      ownerReferences: ownerOf(pod),
      tokens,
    });
  })[0];
}
