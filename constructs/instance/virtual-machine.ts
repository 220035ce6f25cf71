import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  toJson_VirtualMachineInstanceSpec,
  toJson_VirtualMachineSpec,
  VirtualMachine,
  VirtualMachineInstance,
  VirtualMachineInstanceSpecDomainMemoryGuest,
  VirtualMachineInstanceSpecDomainResourcesLimits,
  VirtualMachineInstanceSpecDomainResourcesRequests,
  VirtualMachineInstanceSpecReadinessProbeTcpSocketPort,
  VirtualMachineSpecDataVolumeTemplatesSpecPvcResourcesRequests,
  type VirtualMachineInstanceSpec,
  type VirtualMachineSpecDataVolumeTemplatesSpecSource,
} from '../../imports/kubevirt.io.ts';
import { claimMounts, type EnvironmentPlan } from '../../src/model/instance-plan.ts';
import { canonicalQuantity } from '../../src/model/resources.ts';
import { READINESS_PROBE_BASE } from './instance-pod-defaults.ts';

/** VMI containerDisk pull secret and CDI registry import secret every VM namespace holds (docs/behaviour.md §3). */
export const REGISTRY_CREDENTIALS = 'registry-credentials';
export const REGISTRY_CREDENTIALS_CDI = 'registry-credentials-cdi';

export interface VirtualMachineEnvironmentProps {
  readonly environment: EnvironmentPlan;
  readonly running: boolean;
  readonly labels: Record<string, string>;
  readonly selectorLabels: Record<string, string>;
  /**
   * The cloud-init Secret, mounted as a `cloudInitNoCloud` disk (Standard mode only).
   * @default none: no cloud-init disk
   */
  readonly cloudInitSecretName?: string;
}

/**
 * A VirtualMachine or CloudVM environment (docs/behaviour.md §7.4): a persistent one is a KubeVirt
 * VirtualMachine whose root disk is a DataVolume (registry or http import) and which `running`
 * starts and stops; an ephemeral one is a bare VirtualMachineInstance with a containerDisk,
 * rendered while the plan's workload runs (a stopped one runs on under `stoppedEphemeral:
 * keep-running`, docs/behaviour.md Decision 9).
 */
export class VirtualMachineEnvironment extends Construct {
  constructor(scope: Construct, id: string, props: VirtualMachineEnvironmentProps) {
    super(scope, id);
    const env = props.environment;
    if (env.persistent) {
      // The VMI spec is built once with the VMI's generated types and shared with the VM template.
      // The VM's own generated class would re-convert that (already wire-form) spec and drop its
      // quantities, so the VM is a plain ApiObject holding the wire form of both typed parts.
      const spec = toJson_VirtualMachineSpec({
        running: props.running,
        dataVolumeTemplates: [
          {
            metadata: { name: env.name },
            spec: {
              source: dataVolumeSource(env),
              pvc: {
                accessModes: ['ReadWriteOnce'],
                ...(env.rootDisk?.volumeMode ? { volumeMode: env.rootDisk.volumeMode } : {}),
                resources: {
                  requests: {
                    storage: VirtualMachineSpecDataVolumeTemplatesSpecPvcResourcesRequests.fromString(canonicalQuantity(env.env.resources.disk ?? 0)),
                  },
                },
              },
            },
          },
        ],
        template: { metadata: { labels: props.selectorLabels } },
      })!;
      spec.template.spec = toJson_VirtualMachineInstanceSpec(vmiSpec(env, props.cloudInitSecretName));
      new ApiObject(this, 'vm', { ...VirtualMachine.GVK, metadata: { name: env.name, labels: props.labels }, spec });
    } else if (env.workloadRunning) {
      new VirtualMachineInstance(this, 'vmi', {
        metadata: { name: env.name, labels: props.labels },
        spec: vmiSpec(env, props.cloudInitSecretName),
      });
    }
  }
}

function dataVolumeSource(env: EnvironmentPlan): VirtualMachineSpecDataVolumeTemplatesSpecSource {
  // A LocalVM's disk is a CDI clone of its golden PVC (the plan refuses a LocalVM without one).
  const golden = env.rootDisk?.goldenPvc;
  if (golden) return { pvc: { namespace: golden.namespace, name: golden.name } };
  return env.env.environmentType === 'CloudVM'
    ? { http: { url: env.env.image } }
    : { registry: { url: `docker://${env.env.image}`, secretRef: REGISTRY_CREDENTIALS_CDI } };
}

/** The VMI spec shared by a VM template and a bare VMI (docs/behaviour.md §7.4). */
export function vmiSpec(env: EnvironmentPlan, cloudInitSecretName: string | undefined): VirtualMachineInstanceSpec {
  const res = env.vmResources!;
  const withCloudInit = env.standardMode && cloudInitSecretName !== undefined;
  const claims = claimMounts(env);
  return {
    domain: {
      cpu: { cores: env.env.resources.cpu },
      memory: { guest: VirtualMachineInstanceSpecDomainMemoryGuest.fromString(canonicalQuantity(env.env.resources.memory)) },
      resources: {
        requests: {
          cpu: VirtualMachineInstanceSpecDomainResourcesRequests.fromString(res.requests.cpu),
          memory: VirtualMachineInstanceSpecDomainResourcesRequests.fromString(res.requests.memory),
          ...mapValues(res.extended, VirtualMachineInstanceSpecDomainResourcesRequests.fromString),
        },
        limits: {
          cpu: VirtualMachineInstanceSpecDomainResourcesLimits.fromString(res.limits.cpu),
          memory: VirtualMachineInstanceSpecDomainResourcesLimits.fromString(res.limits.memory),
          ...mapValues(res.extended, VirtualMachineInstanceSpecDomainResourcesLimits.fromString),
        },
      },
      devices: {
        disks: [
          { name: 'root', disk: { bus: 'virtio' } },
          ...(withCloudInit ? [{ name: 'cloud-init', disk: { bus: 'virtio' } }] : []),
        ],
        interfaces: [{ name: 'default', bridge: {}, ...(env.macAddress ? { macAddress: env.macAddress } : {}) }],
        // MyDrive's mirror and SharedVolumes reach the guest through virtiofs; cloud-init mounts them (cloud-init.ts).
        ...(claims.length ? { filesystems: claims.map((m) => ({ name: m.claimName, virtiofs: {} })) } : {}),
      },
    },
    networks: [{ name: 'default', pod: {} }],
    volumes: [
      env.persistent
        ? { name: 'root', dataVolume: { name: env.name } }
        : { name: 'root', containerDisk: { image: env.env.image, imagePullSecret: REGISTRY_CREDENTIALS, imagePullPolicy: 'IfNotPresent' } },
      // Go's UserDataSecretRef is `secretRef` on the wire.
      ...(withCloudInit ? [{ name: 'cloud-init', cloudInitNoCloud: { secretRef: { name: cloudInitSecretName } } }] : []),
      ...claims.map((m) => ({ name: m.claimName, persistentVolumeClaim: { claimName: m.claimName, ...(m.readOnly ? { readOnly: true } : {}) } })),
    ],
    readinessProbe: {
      tcpSocket: { port: VirtualMachineInstanceSpecReadinessProbeTcpSocketPort.fromNumber(env.env.guiEnabled ? 6080 : 22) },
      ...READINESS_PROBE_BASE,
    },
    terminationGracePeriodSeconds: 60,
    ...(env.nodeSelector ? { nodeSelector: env.nodeSelector } : {}),
  };
}

/** Each value of `m` through `f`; none for no map. */
function mapValues<T>(m: Record<string, string> | undefined, f: (v: string) => T): Record<string, T> {
  return Object.fromEntries(Object.entries(m ?? {}).map(([k, v]) => [k, f(v)]));
}
