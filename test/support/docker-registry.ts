// A real Docker Registry (Debian's `docker-registry`, distribution 2.8) for tests: started on
// 127.0.0.1:<free port> with a throw-away filesystem store, optionally behind htpasswd basic
// auth, and filled through its HTTP API (one blob upload + one manifest per repository:tag).
// Install it with scripts/ensure-docker-registry.sh.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export const DOCKER_REGISTRY_BIN = process.env.DOCKER_REGISTRY_BIN ?? '/usr/bin/docker-registry';

export function dockerRegistryAvailable(): boolean {
  return existsSync(DOCKER_REGISTRY_BIN);
}


export interface TestRegistry {
  url: string;
  /** Authorization header value when auth is on. */
  authorization?: string;
  push(repository: string, tag: string): Promise<void>;
  stop(): Promise<void>;
  logs(): string;
}

export async function startRegistry(opts: { auth?: { username: string; password: string } } = {}): Promise<TestRegistry> {
  const dir = mkdtempSync(join(tmpdir(), 'registry-'));
  const port = await freePort();
  const lines = [
    'version: 0.1',
    'log: {level: warn, accesslog: {disabled: true}}',
    `storage: {filesystem: {rootdirectory: ${join(dir, 'data')}}, delete: {enabled: true}}`,
    `http: {addr: "127.0.0.1:${port}", secret: test-secret}`,
  ];
  let authorization: string | undefined;
  if (opts.auth) {
    // bcrypt is the only hash distribution's htpasswd accepts; apache2-utils' htpasswd -B makes it.
    const entry = execFileSync('htpasswd', ['-Bbn', opts.auth.username, opts.auth.password], { encoding: 'utf8' }).trim();
    writeFileSync(join(dir, 'htpasswd'), `${entry}\n`);
    lines.push(`auth: {htpasswd: {realm: test-registry, path: ${join(dir, 'htpasswd')}}}`);
    authorization = `Basic ${Buffer.from(`${opts.auth.username}:${opts.auth.password}`).toString('base64')}`;
  }
  writeFileSync(join(dir, 'config.yml'), `${lines.join('\n')}\n`);
  let output = '';
  const child: ChildProcess = spawn(DOCKER_REGISTRY_BIN, ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`docker-registry exited (${child.exitCode}): ${output}`);
    const status = await fetch(`${url}/v2/`).then((r) => r.status, () => 0);
    if (status === 200 || status === 401) break;
    if (Date.now() > deadline) throw new Error(`docker-registry did not answer on ${url}: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const headers = (extra: Record<string, string> = {}) => ({ ...(authorization ? { Authorization: authorization } : {}), ...extra });

  async function uploadBlob(repository: string, content: Buffer): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    const start = await fetch(`${url}/v2/${repository}/blobs/uploads/`, { method: 'POST', headers: headers() });
    if (start.status !== 202) throw new Error(`blob upload start ${repository}: ${start.status} ${await start.text()}`);
    const location = new URL(start.headers.get('location')!, url);
    location.searchParams.set('digest', digest);
    const put = await fetch(location, { method: 'PUT', headers: headers({ 'Content-Type': 'application/octet-stream' }), body: new Uint8Array(content) });
    if (put.status !== 201) throw new Error(`blob upload ${repository}: ${put.status} ${await put.text()}`);
    return digest;
  }

  return {
    url,
    authorization,
    async push(repository, tag) {
      const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] }, config: {} }));
      const layer = Buffer.from(`${repository}:${tag}`);
      const manifest = {
        schemaVersion: 2,
        mediaType: 'application/vnd.docker.distribution.manifest.v2+json',
        config: { mediaType: 'application/vnd.docker.container.image.v1+json', size: config.length, digest: await uploadBlob(repository, config) },
        layers: [{ mediaType: 'application/vnd.docker.image.rootfs.diff.tar.gzip', size: layer.length, digest: await uploadBlob(repository, layer) }],
      };
      const res = await fetch(`${url}/v2/${repository}/manifests/${tag}`, {
        method: 'PUT',
        headers: headers({ 'Content-Type': manifest.mediaType }),
        body: JSON.stringify(manifest),
      });
      if (res.status !== 201) throw new Error(`manifest ${repository}:${tag}: ${res.status} ${await res.text()}`);
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
    logs: () => output,
  };
}
