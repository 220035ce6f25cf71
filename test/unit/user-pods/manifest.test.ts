import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchManifest, parseManifestPrefix, type ManifestPrefix } from '../../../src/user-pods/manifest.ts';

const POD = 'apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b}]}\n';

describe('seed 004: fetching a whitelisted manifest', () => {
  let server: http.Server;
  let base = '';
  let allowed: ManifestPrefix[];
  const hits: string[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      hits.push(req.url ?? '');
      if (req.url === '/manifests/pod.yaml') res.writeHead(200).end(POD);
      else if (req.url === '/manifests/hop.yaml') res.writeHead(302, { Location: '/manifests/pod.yaml' }).end();
      else if (req.url === '/manifests/away.yaml') res.writeHead(301, { Location: `${base}/evil/pod.yaml` }).end();
      else if (req.url === '/manifests/big.yaml') res.writeHead(200, { 'Content-Length': 2048 }).end(Buffer.alloc(2048, ' '));
      else if (req.url === '/manifests/endless.yaml') {
        res.writeHead(200); // chunked, no length announced
        const more = () => (res.write(Buffer.alloc(512, ' ')) ? setImmediate(more) : res.once('drain', more));
        res.on('close', () => res.removeAllListeners('drain'));
        more();
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    allowed = [parseManifestPrefix(`${base}/manifests/`)];
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });

  it('fetches the normalised URL: ".." inside the prefix is resolved before the request', async () => {
    expect((await fetchManifest(`${base}/manifests/sub/../pod.yaml`, allowed)).metadata.name).toBe('p');
    expect(hits.at(-1)).toBe('/manifests/pod.yaml');
  });
  it('never follows a redirect, not even one back under the prefix', async () => {
    await expect(fetchManifest(`${base}/manifests/hop.yaml`, allowed)).rejects.toThrow(/HTTP 302 \(redirects are not followed\)/);
    await expect(fetchManifest(`${base}/manifests/away.yaml`, allowed)).rejects.toThrow(/HTTP 301/);
    expect(hits).not.toContain('/evil/pod.yaml');
  });
  it('refuses a manifest over the size cap, announced or streamed', async () => {
    await expect(fetchManifest(`${base}/manifests/big.yaml`, allowed, { maxBytes: 1024 })).rejects.toThrow(/larger than 1024 bytes/);
    await expect(fetchManifest(`${base}/manifests/endless.yaml`, allowed, { maxBytes: 64 * 1024 })).rejects.toThrow(/larger than 65536 bytes/);
  });
  it('a URL outside the prefix is not requested at all', async () => {
    const before = hits.length;
    await expect(fetchManifest(`${base}/manifests/../evil/pod.yaml`, allowed)).rejects.toThrow(/not matched by the manifest whitelist/);
    expect(hits.length).toBe(before);
  });
});
