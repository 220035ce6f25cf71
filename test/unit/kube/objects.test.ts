// The object verbs of src/kube/objects.ts over a real KubeClient and an HTTPS double that answers
// as the API server does (404 Status for a missing object).
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KubeApiError, KubeClient } from '../../../src/kube/client.ts';
import { deleteObject, FIELD_MANAGER, getObject, listObjects, serverSideApply } from '../../../src/kube/objects.ts';
import { makeServingCert } from '../../support/tls.ts';

interface Seen {
  method: string;
  url: string;
  contentType?: string;
  body: unknown;
}

describe('object verbs over KubeClient', () => {
  let dir: string;
  let server: https.Server;
  let client: KubeClient;
  let seen: Seen[] = [];
  const live = new Map<string, Record<string, unknown>>([['/api/v1/namespaces/ns/pods/present', { kind: 'Pod', metadata: { name: 'present' } }]]);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'kube-objects-'));
    const cert = await makeServingCert(dir, undefined, 'kube-objects-test');
    server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString('utf8')));
      req.on('end', () => {
        const url = req.url ?? '';
        seen.push({ method: req.method ?? '', url, contentType: req.headers['content-type'], body: text ? JSON.parse(text) : undefined });
        const p = url.split('?')[0];
        const answer = (code: number, body: unknown) => {
          res.statusCode = code;
          res.setHeader('Content-Type', 'application/json');
          res.end(JSON.stringify(body));
        };
        if (req.method === 'GET' && p === '/api/v1/namespaces/ns/pods') return answer(200, { items: [...live.values()] });
        if (req.method === 'PATCH') return answer(200, JSON.parse(text));
        if (req.method === 'DELETE' && p.endsWith('/taken')) return answer(409, { kind: 'Status', code: 409, message: 'Precondition failed: UID in precondition' });
        const obj = live.get(p);
        if (!obj) return answer(404, { kind: 'Status', code: 404, reason: 'NotFound', message: `${p} not found` });
        return answer(200, obj);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `https://127.0.0.1:${port}`, caData: Buffer.from(cert.caPem).toString('base64') }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    client = new KubeClient(kubeConfig);
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await rm(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    seen = [];
  });

  it('getObject returns the live object, undefined for a 404, and throws other errors', async () => {
    expect(await getObject(client, 'v1', 'Pod', 'ns', 'present')).toEqual({ kind: 'Pod', metadata: { name: 'present' } });
    expect(await getObject(client, 'v1', 'Pod', 'ns', 'missing')).toBeUndefined();
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual(['GET /api/v1/namespaces/ns/pods/present', 'GET /api/v1/namespaces/ns/pods/missing']);
  });

  it('listObjects sends only the selectors given and returns the items', async () => {
    expect(await listObjects(client, 'v1', 'Pod', 'ns', { labelSelector: 'a=b' })).toHaveLength(1);
    expect(seen[0].url).toBe('/api/v1/namespaces/ns/pods?labelSelector=a%3Db');
  });

  it('deleteObject deletes in the background with a uid precondition; false when already gone; a 409 is the caller\'s', async () => {
    expect(await deleteObject(client, 'v1', 'Pod', 'ns', 'present', 'u-1')).toBe(true);
    expect(seen[0]).toMatchObject({ method: 'DELETE', url: '/api/v1/namespaces/ns/pods/present?propagationPolicy=Background', body: { kind: 'DeleteOptions', preconditions: { uid: 'u-1' } } });
    expect(await deleteObject(client, 'v1', 'Pod', 'ns', 'missing')).toBe(false);
    expect(seen[1].body).toBeUndefined();
    const e = await deleteObject(client, 'v1', 'Pod', 'ns', 'taken', 'u-2').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(KubeApiError);
    expect((e as KubeApiError).code).toBe(409);
  });

  it('serverSideApply patches with our field manager and force, dry-run on request, the object as the body', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' } };
    expect(await serverSideApply(client, pod, { dryRun: true })).toEqual(pod);
    await serverSideApply(client, pod);
    expect(seen.map((s) => s.url)).toEqual([
      `/api/v1/namespaces/ns/pods/p?fieldManager=${FIELD_MANAGER}&force=true&dryRun=All`,
      `/api/v1/namespaces/ns/pods/p?fieldManager=${FIELD_MANAGER}&force=true`,
    ]);
    expect(seen[0]).toMatchObject({ method: 'PATCH', contentType: 'application/apply-patch+yaml', body: pod });
  });
});
