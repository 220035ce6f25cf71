import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import type { NfsShare } from '../../src/model/mydrive.ts';
import type { ClaimMount } from '../../src/model/instance-plan.ts';
import { yamlString } from '../../src/model/yaml-scalar.ts';

export interface CloudInitSecretProps {
  /** Secret name: `canon(instance)`. */
  readonly name: string;
  readonly labels: Record<string, string>;
  /** Owner keys first, then the workspace managers' (docs/behaviour.md §7.4). */
  readonly publicKeys: readonly string[];
  /**
   * The MyDrive share to mount at /media/mydrive.
   * @default none: `mounts: []`
   */
  readonly nfs?: NfsShare;
  /**
   * e62be9e: the claims to mount (MyDrive's mirror, SharedVolumes), each by its virtiofs tag.
   * @default none
   */
  readonly claims?: readonly ClaimMount[];
}

/** SHA-512 crypt of the password `crownlabs`, as upstream ships it. */
const CROWNLABS_PASSWD_HASH =
  '$6$rounds=4096$tBS1sNBpnw6feehB$lS9b7VKH6WMAFOB0SrHCgjD2BKs9CegDe51EiMRWbxQeCVnoGL4u0jNaRsYhvVoBFaRlXZkNsxfFhXvCBaNeQ.';

const NFS_OPTIONS = 'rw,tcp,hard,intr,rsize=8192,wsize=8192,timeo=14';

/** The cloud-init Secret of a VM Instance (docs/behaviour.md §7.4): data key `userdata`, rewritten on every reconcile. */
export class CloudInitSecret extends Construct {
  constructor(scope: Construct, id: string, props: CloudInitSecretProps) {
    super(scope, id);
    new k8s.KubeSecret(this, 'secret', {
      metadata: { name: props.name, labels: props.labels },
      type: 'Opaque',
      data: { userdata: Buffer.from(cloudInitUserData(props.publicKeys, props.nfs, props.claims)).toString('base64') },
    });
  }
}

/**
 * The `#cloud-config` document, laid out byte for byte as upstream's YAML encoder prints it
 * (4-space indent, nested sequences indented by two) so that VMs see the same user data.
 * Keys are the Tenant's own text: written by the shared safe formatter, which quotes and escapes
 * whatever PyYAML (cloud-init's reader) could read as more than one string (#14.5).
 */
export function cloudInitUserData(publicKeys: readonly string[], nfs?: NfsShare, claims: readonly ClaimMount[] = []): string {
  const lines = ['#cloud-config', 'users:', '    - name: crownlabs', '      lock_passwd: false', `      passwd: ${CROWNLABS_PASSWD_HASH}`, '      sudo: ALL=(ALL) NOPASSWD:ALL'];
  if (publicKeys.length > 0) {
    lines.push('      ssh_authorized_keys:', ...publicKeys.map((k) => `        - ${yamlString(k)}`));
  }
  lines.push('      shell: /bin/bash', 'network:', '    version: 2', '    id0:', '        dhcp4: true');
  const mounts: string[][] = [];
  if (nfs) mounts.push([yamlString(`${nfs.server}:${nfs.path}`), '/media/mydrive', 'nfs', NFS_OPTIONS]);
  // A virtiofs filesystem is mounted by its tag, the VMI's filesystem (and volume) name.
  for (const m of claims) mounts.push([yamlString(m.claimName), yamlString(m.mountPath), 'virtiofs', `${m.readOnly ? 'ro' : 'rw'},_netdev,user`]);
  if (mounts.length === 0) lines.push('mounts: []');
  else {
    lines.push('mounts:');
    for (const [what, where, type, options] of mounts) lines.push(`    - - ${what}`, `      - ${where}`, `      - ${type}`, `      - ${options}`, '      - "0"', '      - "0"');
  }
  if (publicKeys.length > 0) {
    lines.push('ssh_authorized_keys:', ...publicKeys.map((k) => `    - ${yamlString(k)}`));
  }
  return `${lines.join('\n')}\n`;
}
