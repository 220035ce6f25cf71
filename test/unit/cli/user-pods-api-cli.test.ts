import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crownlabs } from '../../support/cli.ts';

describe('crownlabs user-pods-api', () => {
  it('is listed with its endpoints and takes --config, --listen, --kubeconfig and the authentication flags', () => {
    const r = crownlabs(['user-pods-api', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('create_pod');
    for (const flag of ['--config <file>', '--listen <addr>', '--kubeconfig <file>', '--auth-token-file <file>', '--tls-cert-dir <dir>', '--client-ca <file>', '--insecure-no-auth']) expect(r.stdout).toContain(flag);
  });
  it('beyond loopback without authentication: one line and exit 2 (usage), before reading any configuration or kubeconfig', () => {
    const home = mkdtempSync(join(tmpdir(), 'userpods-home-'));
    for (const listen of [[], ['--listen', '0.0.0.0:0']]) {
      const r = crownlabs(['user-pods-api', ...listen, '--config', join(home, 'missing.yaml')], undefined, { KUBECONFIG: '', HOME: home, USER_PODS_API_TOKEN: undefined });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/^crownlabs user-pods-api: refusing to listen on (:8080|0\.0\.0\.0:0) without authentication: anyone reaching the port could list any user's pods with their tokens and delete their storage\. Give --auth-token-file .* or opt out with --insecure-no-auth\n$/);
    }
  });
  it('refuses a bad configuration with every problem (configuration error, exit 1) before touching a cluster', () => {
    const dir = mkdtempSync(join(tmpdir(), 'userpods-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'timeoutCreate: soon\n');
    const r = crownlabs(['user-pods-api', '--listen', '127.0.0.1:0', '--config', file], undefined, { BACKEND_TOKENBYTELIMIT: 'lots' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid duration "soon"');
    expect(r.stderr).toContain('environment BACKEND_TOKENBYTELIMIT: tokenByteLimit: must be integer');
  });
  it('without any kubeconfig: one clear line and exit 1, not an internal error', () => {
    const home = mkdtempSync(join(tmpdir(), 'userpods-home-'));
    const r = crownlabs(['user-pods-api', '--listen', '127.0.0.1:0'], undefined, { KUBECONFIG: '', HOME: home });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('crownlabs user-pods-api: no kubeconfig: give --kubeconfig FILE, set KUBECONFIG, create ~/.kube/config, or run in a cluster with a service account\n');
  });
  it('an unreadable --kubeconfig or one without a current context: one line naming the file, exit 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'userpods-kc-'));
    const missing = join(dir, 'missing.kubeconfig');
    let r = crownlabs(['user-pods-api', '--listen', '127.0.0.1:0', '--kubeconfig', missing]);
    expect([r.code, r.stderr]).toEqual([1, `crownlabs user-pods-api: cannot load kubeconfig ${missing}: ENOENT: no such file or directory, open '${missing}'\n`]);
    const empty = join(dir, 'empty.kubeconfig');
    writeFileSync(empty, 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n');
    r = crownlabs(['user-pods-api', '--listen', '127.0.0.1:0', '--kubeconfig', empty]);
    expect([r.code, r.stderr]).toEqual([1, `crownlabs user-pods-api: kubeconfig ${empty} has no current context\n`]);
  });
  it('an API server that cannot be reached: one line naming it, exit 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'userpods-kc-'));
    const kc = join(dir, 'down.kubeconfig');
    // Port 1 on loopback: nothing listens there.
    writeFileSync(kc, 'apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: x}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n');
    const r = crownlabs(['user-pods-api', '--listen', '127.0.0.1:0', '--kubeconfig', kc]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('crownlabs user-pods-api: cannot list the user pods in namespace sciencedata on https://127.0.0.1:1: connect ECONNREFUSED 127.0.0.1:1\n');
  });
});
