import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { bundledEntry, LAZY_PACKAGES } from '../../../src/runtime/bundle.mjs';

const REPO = join(import.meta.dirname, '..', '..', '..');
const root = mkdtempSync(join(tmpdir(), 'bundle-test-'));
symlinkSync(join(REPO, 'node_modules'), join(root, 'node_modules'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: u, user: { token: secret-token } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;

describe('bundledEntry', () => {
  it("does not load node-fetch lazily: client-node's API clients default-import it from ES modules, which would get the facade's object, not a function", () => {
    expect(typeof createRequire(import.meta.url)('node-fetch')).toBe('function');
    expect(LAZY_PACKAGES).not.toContain('node-fetch');
  });

  it("bundles client-node's KubeConfig module alone: the bundle does not load the package index (its every generated API client)", async () => {
    writeFileSync(
      join(root, 'entry.ts'),
      `import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
import { Command } from 'commander';
export async function probe(text: string) {
  const k = new KubeConfig();
  k.loadFromString(text);
  const o: { headers?: Record<string, string> } = {};
  await k.applyToHTTPSOptions(o);
  return { server: k.getCurrentCluster()?.server, auth: o.headers?.Authorization, commander: typeof Command };
}
`,
    );
    const url = await bundledEntry('entry.ts', [], root);
    const text = readFileSync(fileURLToPath(url), 'utf8');
    // Other packages stay external (but the lazy ones, LAZY_PACKAGES), client-node is not imported from node_modules at all.
    expect(text).toMatch(/from "commander"/);
    expect(text).not.toMatch(/from "@kubernetes\/client-node[^"]*"/);
    expect(text).toMatch(/class _?KubeConfig/);
    const { probe } = (await import(url.href)) as { probe: (t: string) => Promise<Record<string, string>> };
    expect(await probe(KUBECONFIG)).toEqual({ server: 'https://127.0.0.1:6443', auth: 'Bearer secret-token', commander: 'function' });
  }, 60_000);

  it("loads the KubeConfig module's OIDC, exec and proxy packages only when a kubeconfig needs them", async () => {
    writeFileSync(
      join(root, 'proxy-entry.ts'),
      `import { createRequire } from 'node:module';
import { KubeConfig } from '@kubernetes/client-node/dist/config.js';
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('socks-proxy-agent'));
export async function probe(text: string) {
  const before = loaded();
  const k = new KubeConfig();
  k.loadFromString(text);
  const o: { agent?: object } = {};
  await k.applyToHTTPSOptions(o);
  return { before, after: loaded(), agent: o.agent?.constructor.name };
}
`,
    );
    const url = await bundledEntry('proxy-entry.ts', [], root);
    const text = readFileSync(fileURLToPath(url), 'utf8');
    for (const p of ['openid-client', 'socks-proxy-agent', 'hpagent', 'jsonpath-plus', 'rfc4648']) expect(text).not.toContain(`from "${p}"`);
    // A fresh process: making the bundle read the lazy packages' export names in this one.
    const proxied = KUBECONFIG.replace("server: 'https://127.0.0.1:6443'", "server: 'https://127.0.0.1:6443', proxy-url: 'socks5://127.0.0.1:1080'");
    const script = `const { probe } = await import(${JSON.stringify(url.href)}); console.log(JSON.stringify(await probe(${JSON.stringify(proxied)})));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ before: false, after: true, agent: 'SocksProxyAgent' });
  }, 60_000);
});
