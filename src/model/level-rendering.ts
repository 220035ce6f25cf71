/**
 * Where an Instance's objects differ per API level in what is rendered, not only in the input
 * fields read (docs/behaviour.md §16.3): one row per level. The plan reads it; constructs and
 * the controller only see the plan.
 */
import type { ApiLevel } from '../inputs/api-level.ts';
import type { EnvironmentType } from '../inputs/types.ts';

export type VolumeMode = 'Block' | 'Filesystem';

export interface LevelRendering {
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

export const LEVEL_RENDERING: Readonly<Record<ApiLevel, LevelRendering>> = {
  '2e8aeb9': {
    rootDiskVolumeMode: () => undefined,
    keepsMacAddress: false,
    nodeSelectorLabel: false,
  },
  e62be9e: {
    // Images of CloudVM and LocalVM are raw disks (an http import, a clone of a Block golden PVC).
    rootDiskVolumeMode: (type) => (type === 'CloudVM' || type === 'LocalVM' ? 'Block' : 'Filesystem'),
    keepsMacAddress: true,
    nodeSelectorLabel: true,
  },
};
