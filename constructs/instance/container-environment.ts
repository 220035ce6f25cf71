import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { ComposerConfig } from '../../src/config/config.ts';
import { claimMounts, type EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { canonicalQuantity } from '../../src/model/resources.ts';
import { myDriveVolume, myDriveVolumeMount } from './mydrive-mount.ts';
import { INSTANCE_POD_SECURITY_CONTEXT, READINESS_PROBE_BASE, restrictiveSecurityContext } from './instance-pod-defaults.ts';

const PERSISTENT_VOLUME = 'persistent';
/** Where content lands and persists unless the Template names a `contentPath`. */
const DEFAULT_DATA_PATH = '/media/data';

export interface ContainerEnvironmentProps {
  readonly environment: EnvironmentPlan;
  readonly labels: Record<string, string>;
  readonly selectorLabels: Record<string, string>;
  /**
   * The Instance's content origin for this environment (src/model/customization-urls.ts), which wins over the Template's archive.
   * @default the Template's `sourceArchiveURL`; with neither, no content-downloader init container
   */
  readonly contentOrigin?: string;
  readonly config: Pick<
    ComposerConfig,
    | 'containerEnvSidecarsTag'
    | 'containerEnvWebsockifyImg'
    | 'containerEnvXVncImg'
    | 'containerEnvContentDownloaderImg'
    | 'containerEnvInstmetricsServerEndpoint'
  >;
}

/**
 * A Container or Standalone environment (docs/behaviour.md §7.5): the PVC of a persistent one and
 * the Deployment. Its Pod is laid out as the plan's `pod` says (per level, src/model/pod-layout.ts):
 * a Container's VNC desktop in websockify + Xvnc sidecars beside the app (2e8aeb9), or the app alone
 * serving its web UI, as a Standalone's does. The Deployment has 1 replica
 * while the plan's workload runs, else 0 (a stopped ephemeral one runs on under
 * `stoppedEphemeral: keep-running`, docs/behaviour.md Decision 9).
 */
export class ContainerEnvironment extends Construct {
  constructor(scope: Construct, id: string, props: ContainerEnvironmentProps) {
    super(scope, id);
    const plan = props.environment;
    const env = plan.env;
    const cfg = props.config;
    const sidecar = (image: string) => `${image}:${cfg.containerEnvSidecarsTag}`;
    const dataPath = env.containerStartupOptions?.contentPath || DEFAULT_DATA_PATH;

    if (plan.persistent) {
      new k8s.KubePersistentVolumeClaim(this, 'pvc', {
        metadata: { name: plan.name, labels: props.labels },
        spec: {
          accessModes: ['ReadWriteOnce'],
          ...(env.storageClassName ? { storageClassName: env.storageClassName } : {}),
          resources: { requests: { storage: k8s.Quantity.fromString(canonicalQuantity(env.resources.disk ?? 0)) } },
        },
      });
    }

    const volumes: k8s.Volume[] = [
      plan.persistent ? { name: PERSISTENT_VOLUME, persistentVolumeClaim: { claimName: plan.name } } : { name: PERSISTENT_VOLUME, emptyDir: {} },
    ];
    if (plan.nfs) volumes.push(myDriveVolume(plan.nfs));
    const claims = claimMounts(plan);
    for (const m of claims) volumes.push({ name: m.claimName, persistentVolumeClaim: { claimName: m.claimName, ...(m.readOnly ? { readOnly: true } : {}) } });

    const contentOrigin = props.contentOrigin || env.containerStartupOptions?.sourceArchiveURL;
    const initContainers: k8s.Container[] = contentOrigin
      ? [
          {
            name: 'content-downloader',
            image: sidecar(cfg.containerEnvContentDownloaderImg),
            resources: resources('500m', '256Mi', '1', '1Gi'),
            volumeMounts: [{ name: PERSISTENT_VOLUME, mountPath: DEFAULT_DATA_PATH }],
            env: [
              { name: 'SOURCE_ARCHIVE', value: contentOrigin },
              { name: 'DESTINATION_PATH', value: DEFAULT_DATA_PATH },
            ],
            securityContext: restrictiveSecurityContext(),
          },
        ]
      : [];

    const res = plan.containerResources!;
    const pod = plan.pod!;
    const app: k8s.Container = {
      name: env.name,
      image: env.image,
      resources: resources(res.requests.cpu, res.requests.memory, res.limits.cpu, res.limits.memory, res.extended),
      env: [
        // containerName as upstream sets it (its own name): the pod template must match upstream's.
        { name: 'CROWNLABS_CPU_REQUESTS', valueFrom: { resourceFieldRef: { containerName: env.name, resource: 'requests.cpu', divisor: k8s.Quantity.fromString('0') } } },
        { name: 'CROWNLABS_CPU_LIMITS', valueFrom: { resourceFieldRef: { containerName: env.name, resource: 'limits.cpu', divisor: k8s.Quantity.fromString('0') } } },
        ...(pod.appServesGui
          ? [
              { name: 'CROWNLABS_BASE_PATH', value: pod.appPath },
              { name: 'CROWNLABS_LISTEN_PORT', value: '6080' },
            ]
          : []),
      ],
      ...(pod.appServesGui
        ? {
            ports: [{ name: 'gui', containerPort: 6080, protocol: 'TCP' }],
            readinessProbe: { httpGet: { port: k8s.IntOrString.fromString('gui'), path: pod.readinessPath }, ...READINESS_PROBE_BASE },
          }
        : {}),
      volumeMounts: [
        { name: PERSISTENT_VOLUME, mountPath: dataPath },
        ...(plan.nfs ? [myDriveVolumeMount()] : []),
        ...claims.map((m) => ({ name: m.claimName, mountPath: m.mountPath, ...(m.readOnly ? { readOnly: true } : {}) })),
      ],
      ...(env.containerStartupOptions
        ? {
            args: env.containerStartupOptions.startupArgs,
            ...(env.containerStartupOptions.enforceWorkdir ? { workingDir: dataPath } : {}),
          }
        : {}),
      securityContext: restrictiveSecurityContext(),
    };

    const containers: k8s.Container[] = pod.vncSidecars
      ? [
          {
            name: 'websockify',
            image: sidecar(cfg.containerEnvWebsockifyImg),
            resources: resources('10m', '30Mi', '100m', '100Mi'),
            env: [
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'APP_CPU_LIMITS', valueFrom: { resourceFieldRef: { containerName: env.name, resource: 'limits.cpu', divisor: k8s.Quantity.fromString('1m') } } },
              { name: 'APP_MEM_LIMITS', valueFrom: { resourceFieldRef: { containerName: env.name, resource: 'limits.memory', divisor: k8s.Quantity.fromString('0') } } },
            ],
            ports: [
              { name: 'gui', containerPort: 6080, protocol: 'TCP' },
              { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
            ],
            args: [
              '--http-addr=:6080',
              `--base-path=${pod.appPath}`,
              '--metrics-addr=:9090',
              `--show-controls=${!env.disableControls}`,
              `--instmetrics-server-endpoint=${cfg.containerEnvInstmetricsServerEndpoint}`,
              '--pod-name=$(POD_NAME)',
              '--cpu-limit=$(APP_CPU_LIMITS)',
              '--memory-limit=$(APP_MEM_LIMITS)',
            ],
            readinessProbe: { httpGet: { port: k8s.IntOrString.fromString('gui'), path: '/healthz' }, ...READINESS_PROBE_BASE },
            securityContext: restrictiveSecurityContext(),
          },
          {
            name: 'xvnc',
            image: sidecar(cfg.containerEnvXVncImg),
            resources: resources('50m', '200Mi', '250m', '600Mi'),
            ports: [{ name: 'xvnc', containerPort: 5900, protocol: 'TCP' }],
            readinessProbe: { tcpSocket: { port: k8s.IntOrString.fromString('xvnc') }, ...READINESS_PROBE_BASE },
            securityContext: restrictiveSecurityContext(),
          },
          app,
        ]
      : [app];

    new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name: plan.name, labels: props.labels },
      spec: {
        replicas: plan.workloadRunning ? 1 : 0,
        selector: { matchLabels: props.selectorLabels },
        strategy: { type: 'Recreate' },
        template: {
          metadata: { labels: props.selectorLabels },
          spec: {
            securityContext: { ...INSTANCE_POD_SECURITY_CONTEXT },
            automountServiceAccountToken: false,
            terminationGracePeriodSeconds: 10,
            enableServiceLinks: false,
            ...(plan.standardMode ? {} : { hostname: plan.mode.toLowerCase() }),
            ...(plan.nodeSelector ? { nodeSelector: plan.nodeSelector } : {}),
            volumes,
            ...(initContainers.length ? { initContainers } : {}),
            containers,
          },
        },
      },
    });
  }
}

/** `extended`: resources such as `nvidia.com/gpu`, requested and limited alike (e62be9e). */
function resources(reqCpu: string, reqMem: string, limCpu: string, limMem: string, extended: Record<string, string> = {}): k8s.ResourceRequirements {
  const other = Object.fromEntries(Object.entries(extended).map(([k, v]) => [k, k8s.Quantity.fromString(v)]));
  return {
    requests: { cpu: k8s.Quantity.fromString(reqCpu), memory: k8s.Quantity.fromString(reqMem), ...other },
    limits: { cpu: k8s.Quantity.fromString(limCpu), memory: k8s.Quantity.fromString(limMem), ...other },
  };
}
