import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandLogger, prettyLine } from '../../../src/cli/log.ts';
import { spawnSync } from 'node:child_process';
import { BIN, ROOT } from '../../support/cli.ts';

/** The real CLI, stopped after 30 s: before #17.2 these commands never ended. */
function crownlabs(args: string[], _cwd?: string, env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...env, CI: 'true' }, timeout: 30_000, killSignal: 'SIGKILL' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** An environment with no kubeconfig anywhere: no KUBECONFIG, an empty home. */
function noKubeconfigEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: mkdtempSync(join(tmpdir(), 'home-')) };
  delete env.KUBECONFIG;
  return env;
}

/** A kubeconfig whose API server is a port nothing listens on. */
async function unreachableKubeconfig(): Promise<{ file: string; server: string }> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  const server = `https://127.0.0.1:${port}`;
  const file = join(mkdtempSync(join(tmpdir(), 'kc-')), 'config');
  writeFileSync(file, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "${server}"}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
  return { file, server };
}

describe('long-running commands without a cluster say so in one line (#17.2)', () => {
  it('controller: no kubeconfig', () => {
    const r = crownlabs(['controller', '--webhook-port', '0'], undefined, noKubeconfigEnv());
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('crownlabs controller: no kubeconfig: give --kubeconfig FILE, set KUBECONFIG, or create ~/.kube/config (in a pod, its ServiceAccount is used)\n');
    expect(r.stdout).toBe('');
  });

  it('controller: no API server behind the kubeconfig', async () => {
    const { file, server } = await unreachableKubeconfig();
    const r = crownlabs(['controller', '--webhook-port', '0', '--kubeconfig', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`crownlabs controller: cannot reach the Kubernetes API server ${server}: connect ECONNREFUSED ${server.slice('https://'.length)}\n`);
  });

  it('bastion-keys and imagelist: no kubeconfig is an error, not an internal error', () => {
    const env = noKubeconfigEnv();
    const b = crownlabs(['bastion-keys', '--authorized-keys-path', join(mkdtempSync(join(tmpdir(), 'keys-')), 'authorized_keys')], undefined, env);
    expect(b.code).toBe(1);
    expect(b.stderr).toMatch(/^crownlabs bastion-keys: no kubeconfig: [^\n]*\n$/);
    const i = crownlabs(['imagelist', '--once', '--advertised-registry-name', 'r.example', '--image-list-name', 'l', '--registry-url', 'http://127.0.0.1:1'], undefined, env);
    expect(i.code).toBe(1);
    expect(i.stderr).toMatch(/^crownlabs imagelist: no kubeconfig: [^\n]*\n$/);
  });
});

describe('one log format for long-running commands (#17.2)', () => {
  it('JSON lines (pino) when not on a terminal', () => {
    const lines: string[] = [];
    const log = commandLogger('controller', { write: (s: string) => lines.push(s) });
    log.info({ kind: 'Tenant' }, 'caches synced');
    const rec = JSON.parse(lines[0]);
    expect(rec).toMatchObject({ level: 30, name: 'crownlabs-controller', kind: 'Tenant', msg: 'caches synced' });
  });

  it('one readable line per record on a terminal, with what it echoes escaped', () => {
    const lines: string[] = [];
    const log = commandLogger('bastion-keys', { write: (s: string) => lines.push(s), isTTY: true });
    log.warn({ tenant: 'evil\u001b[2Jname', n: 3 }, 'skipped key');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN  crownlabs-bastion-keys: skipped key tenant=evil\\x1b\[2Jname n=3\n$/);
    expect(lines[0]).not.toContain('\u001b');
    expect(prettyLine('not json\u0007')).toBe('not json\\x07');
  });
});
