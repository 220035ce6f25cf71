import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { webhookOptions } from '../../../src/cli/controller.ts';
import { crownlabs } from '../../support/cli.ts';

describe('docs/behaviour.md §2.1 controller webhook flags', () => {
  it('--webhook-port 0 or empty turns the webhook server off', () => {
    expect(webhookOptions({ webhookPort: '0', webhookCertDir: '/x' })).toBeUndefined();
    expect(webhookOptions({ webhookPort: '', webhookCertDir: '/x' })).toBeUndefined();
  });

  it('an explicit cert dir, port, host and the comma-separated bypass groups are passed on', () => {
    expect(webhookOptions({ webhookPort: '9443', webhookHost: '127.0.0.1', webhookCertDir: '/certs', webhookBypassGroups: 'system:masters, system:serviceaccounts,,kubernetes:admin' })).toEqual({
      port: 9443,
      host: '127.0.0.1',
      certDir: '/certs',
      bypassGroups: ['system:masters', 'system:serviceaccounts', 'kubernetes:admin'],
    });
  });

  it('without --webhook-cert-dir and no certificate in the default dir, the webhooks are off (not an error)', () => {
    expect(webhookOptions({ webhookPort: '9443', webhookBypassGroups: 'system:masters' })).toBe('no-certificate');
  });

  it('a port that is not a number is a usage error', () => {
    expect(() => webhookOptions({ webhookPort: 'https' })).toThrow(/--webhook-port must be a port number/);
    expect(() => webhookOptions({ webhookPort: '70000' })).toThrow(/--webhook-port/);
  });

  it('`crownlabs controller` with an explicit cert dir lacking a certificate exits 1 and names the file', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wh-cli-'));
    try {
      const kubeconfig = path.join(dir, 'kubeconfig');
      // Never contacted: the webhook server fails before the controller talks to the API server.
      await writeFile(
        kubeconfig,
        'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
      );
      const r2 = crownlabs(['controller', '--kubeconfig', kubeconfig, '--metrics-addr', '127.0.0.1:0', '--health-probe-addr', '127.0.0.1:0', '--webhook-host', '127.0.0.1', '--webhook-port', '65531', '--webhook-cert-dir', dir]);
      expect(r2.code).toBe(1);
      expect(r2.stderr).toMatch(/webhook server: .*tls\.(crt|key)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
