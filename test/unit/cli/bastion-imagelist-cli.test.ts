import { describe, expect, it } from 'vitest';
import { crownlabs as run, ROOT } from '../../support/cli.ts';

function crownlabs(args: string[]) {
  const r = run(args, ROOT, { KUBECONFIG: '/nonexistent' });
  // Help text wraps at the terminal width: compare with whitespace runs folded.
  return { ...r, stdout: r.stdout.replace(/\s+/g, ' ') };
}

describe('§10 crownlabs imagelist flags', () => {
  it('has upstream\'s flags, the password also from CROWNLABS_REGISTRY_PASSWORD', () => {
    const help = crownlabs(['imagelist', '--help']).stdout;
    for (const flag of ['--advertised-registry-name', '--image-list-name', '--registry-url', '--registry-username', '--registry-password', '--update-interval', '--once', '--kubeconfig']) {
      expect(help).toContain(flag);
    }
    expect(help).toContain('CROWNLABS_REGISTRY_PASSWORD');
  });
  it('requires the advertised name, list name and registry URL (usage error, exit 2)', () => {
    const r = crownlabs(['imagelist', '--registry-url', 'http://r']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/required option '--advertised-registry-name <name>' not specified/);
  });
  it('requires --update-interval unless --once', () => {
    const r = crownlabs(['imagelist', '--advertised-registry-name', 'a', '--image-list-name', 'l', '--registry-url', 'http://r']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--update-interval is required (unless --once)');
  });
});

describe('§12 / §15.4 bastion commands', () => {
  it('bastion-keys reads AUTHORIZED_KEYS_PATH, default /auth-keys-vol/authorized_keys', () => {
    const help = crownlabs(['bastion-keys', '--help']).stdout;
    expect(help).toContain('env: AUTHORIZED_KEYS_PATH');
    expect(help).toContain('/auth-keys-vol/authorized_keys');
  });
  it('ssh-tracker serves on --metrics-addr, default :9090', () => {
    const help = crownlabs(['ssh-tracker', '--help']).stdout;
    expect(help).toMatch(/--metrics-addr <addr> .*\(default: ":9090"\)/);
  });
});
