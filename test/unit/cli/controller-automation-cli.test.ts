import { describe, expect, it } from 'vitest';
import { crownlabs as run, ROOT } from '../../support/cli.ts';

function crownlabs(args: string[]) {
  const r = run(args, ROOT, { KUBECONFIG: '/nonexistent' });
  return { ...r, stdout: r.stdout.replace(/\s+/g, ' ') };
}

describe('§8 / §15.3 crownlabs controller: instance automation flags', () => {
  it('has the upstream flag names and the expiration dry-run switch, with their defaults', () => {
    const help = crownlabs(['controller', '--help']).stdout;
    for (const flag of ['--enable-instance-termination', '--enable-instance-submission', '--enable-instance-expiration', '--expiration-dry-run']) expect(help).toContain(flag);
    expect(help).toMatch(/--instance-termination-status-check-timeout <duration> .*\(default: "3s"\)/);
    expect(help).toMatch(/--instance-termination-status-check-interval <duration> .*\(default: "2m"\)/);
  });

  it('an invalid status-check duration is a usage error (exit 2)', () => {
    const r = crownlabs(['controller', '--instance-termination-status-check-interval', 'soon']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('crownlabs controller: invalid duration "soon"');
  });

  it('inactivity: a bad alert count, a bad duration and a missing smtp-config.yaml are usage errors naming the flag or the file', () => {
    const on = ['controller', '--enable-instance-inactive-termination'];
    const count = crownlabs([...on, '--instance-inactive-termination-max-number-of-alerts', '-1']);
    expect(count.code).toBe(2);
    expect(count.stderr).toMatch(/--instance-inactive-termination-max-number-of-alerts.*expected a whole number from 0 to 1000/);
    const interval = crownlabs([...on, '--instance-inactive-termination-notification-interval', '1d']);
    expect(interval.code).toBe(2);
    expect(interval.stderr).toContain('crownlabs controller: --instance-inactive-termination-notification-interval: invalid duration "1d"');
    const mail = crownlabs([...on, '--enable-inactivity-notifications', '--mail-config-dir', '/nonexistent/crownmail']);
    expect(mail.code).toBe(2);
    expect(mail.stderr).toContain('crownlabs controller: /nonexistent/crownmail/smtp-config.yaml: not found');
  });
});
