/**
 * Where an Instance's objects differ per API level in what is rendered, not only in the input
 * fields read (docs/behaviour.md §16.3): one row per level. The plan reads it; constructs and
 * the controller only see the plan.
 */
import type { ApiLevel } from '../inputs/api-level.ts';
import type { EnvironmentType } from '../inputs/types.ts';

export type VolumeMode = 'Block' | 'Filesystem';

export interface ServicePort {
  name: string;
  port: number;
}

/** What an environment's Service ports depend on. */
export interface ServicePortInputs {
  isVM: boolean;
  isContainer: boolean;
  isStandalone: boolean;
  guiEnabled: boolean;
  standardMode: boolean;
}

export interface LevelRendering {
  /** The ports of an environment's Service, in order (docs/behaviour.md §7.3, §16.3); none: no Service. */
  servicePorts(env: ServicePortInputs): ServicePort[];
  /** The Service is headless (`clusterIP: None`): clients reach the Pod or VMI itself. */
  headlessService: boolean;
  /** volumeMode of a persistent VM's root disk; undefined: not written (the cluster's default, Filesystem). */
  rootDiskVolumeMode(type: EnvironmentType): VolumeMode | undefined;
  /**
   * A persistent VM keeps the MAC address its VMI was first given: once reported, it is written into
   * the VM's first interface, so a restart (a new VMI) gets the same one.
   */
  keepsMacAddress: boolean;
  /** The Instance's own label `crownlabs.polito.it/has-node-selector` ("true"/"false") is kept. */
  nodeSelectorLabel: boolean;
}

const SSH: ServicePort = { name: 'ssh', port: 22 };
const GUI: ServicePort = { name: 'gui', port: 6080 };
const METRICS: ServicePort = { name: 'metrics', port: 9090 };

export const LEVEL_RENDERING: Readonly<Record<ApiLevel, LevelRendering>> = {
  '2e8aeb9': {
    servicePorts: (e) => [
      ...(e.isVM ? [SSH] : []),
      ...(e.guiEnabled ? [GUI] : []),
      // Nothing listens on it (kept for parity with upstream).
      ...((e.isStandalone || e.isContainer) && e.standardMode ? [{ name: 'mydrive', port: 8080 }] : []),
      ...(e.isContainer ? [METRICS] : []),
    ],
    headlessService: false,
    rootDiskVolumeMode: () => undefined,
    keepsMacAddress: false,
    nodeSelectorLabel: false,
  },
  e62be9e: {
    // Port `metrics` only when nothing else would make the Service (a Standalone without GUI).
    servicePorts: (e) => {
      const ports = [...(e.isVM ? [SSH] : []), ...(e.guiEnabled ? [GUI] : [])];
      return ports.length ? ports : [METRICS];
    },
    headlessService: true,
    // Images of CloudVM and LocalVM are raw disks (an http import, a clone of a Block golden PVC).
    rootDiskVolumeMode: (type) => (type === 'CloudVM' || type === 'LocalVM' ? 'Block' : 'Filesystem'),
    keepsMacAddress: true,
    nodeSelectorLabel: true,
  },
};
