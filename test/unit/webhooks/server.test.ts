import https from 'node:https';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../../src/inputs/types.ts';
import { MUTATE_PATH, startWebhookServer, VALIDATE_PATH, type WebhookServer } from '../../../src/webhooks/server.ts';
import { makeServingCert, type ServingCert } from '../../support/tls.ts';

const K = 'crownlabs.polito.it/operator-selector';

function post(port: number, ca: string, urlPath: string, body: string, contentType = 'application/json', method = 'POST') {
  return new Promise<{ code: number; text: string }>((resolve, reject) => {
    const req = https.request({ host: '127.0.0.1', port, path: urlPath, method, ca, agent: false, headers: { 'Content-Type': contentType } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const tenant = (name: string, labels?: Record<string, string>): Tenant => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: { name, ...(labels ? { labels } : {}) },
  spec: { firstName: 'A', lastName: 'B', email: 'a@b.c', createSandbox: false },
});
const admissionReview = (request: Record<string, unknown>) => JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request });

describe('docs/behaviour.md §2.1 webhook server: HTTPS on the cert dir, upstream paths', () => {
  let dir: string;
  let certDir: string;
  let first: ServingCert;
  let server: WebhookServer;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'wh-server-'));
    certDir = path.join(dir, 'certs');
    first = await makeServingCert(path.join(dir, 'ca1'), certDir);
    server = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      certDir,
      targetLabel: { key: K, value: 'prod' },
      baseWorkspaces: ['utilities'],
      bypassGroups: ['system:masters'],
      getTenant: async (name) => {
        throw new Error(`tenant ${name} not found`);
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the mutating path answers an AdmissionReview with a JSON patch', async () => {
    const object = tenant('ada');
    const res = await post(server.port, first.caPem, MUTATE_PATH, admissionReview({ uid: 'u1', name: 'ada', operation: 'CREATE', userInfo: { username: 'ada' }, object }));
    expect(res.code).toBe(200);
    const body = JSON.parse(res.text);
    expect(body).toMatchObject({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u1', allowed: true, patchType: 'JSONPatch' } });
    const out = fastJsonPatch.applyPatch(object, JSON.parse(Buffer.from(body.response.patch, 'base64').toString()), true, false).newDocument;
    expect(out.metadata.labels).toEqual({ [K]: 'prod' });
    expect(out.spec.workspaces).toEqual([{ name: 'utilities', role: 'user' }]);
  });

  it('the validating path answers with the decision (here: 400, requester has no Tenant)', async () => {
    const res = await post(server.port, first.caPem, VALIDATE_PATH, admissionReview({ uid: 'u2', name: 'ada', operation: 'UPDATE', userInfo: { username: 'bob' }, object: tenant('ada'), oldObject: tenant('ada') }));
    expect(res.code).toBe(200);
    expect(JSON.parse(res.text).response).toEqual({ uid: 'u2', allowed: false, status: { code: 400, message: 'could not fetch a tenant for the current user: tenant bob not found' } });
  });

  it('bad requests get a 4xx with a clear message and the server keeps serving', async () => {
    const bad = [
      [MUTATE_PATH, '{not json', 'application/json', 'POST', 400, /request body is not JSON/],
      [VALIDATE_PATH, '{}', 'application/json', 'POST', 400, /expected an admission.k8s.io\/v1 AdmissionReview/],
      [VALIDATE_PATH, JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), 'application/json', 'POST', 400, /has no request/],
      [MUTATE_PATH, admissionReview({ operation: 'CREATE' }), 'application/json', 'POST', 400, /request.uid is missing/],
      [MUTATE_PATH, '{}', 'text/plain', 'POST', 400, /expected application\/json/],
      [MUTATE_PATH, '', 'application/json', 'GET', 405, /POST an AdmissionReview/],
      ['/mutate-v1-pod', '{}', 'application/json', 'POST', 404, /no webhook at/],
    ] as const;
    for (const [p, body, type, method, code, message] of bad) {
      const res = await post(server.port, first.caPem, p, body, type, method);
      expect(res.code, `${method} ${p} ${body}`).toBe(code);
      expect(res.text).toMatch(message);
    }
    // A malformed Tenant inside a well-formed review is the webhook's 400 answer, not an HTTP error.
    const res = await post(server.port, first.caPem, MUTATE_PATH, admissionReview({ uid: 'u3', operation: 'CREATE', userInfo: {}, object: 42 }));
    expect(JSON.parse(res.text).response).toEqual({ uid: 'u3', allowed: false, status: { code: 400, message: 'object is not a JSON object' } });
  });

  it('a malformed AdmissionReview is never a 500: with a uid, a 400 AdmissionReview answer; without, an HTTP 400', async () => {
    const good = { uid: 'u9', name: 'ada', operation: 'UPDATE', userInfo: { username: 'bob', groups: ['g'] }, object: tenant('ada'), oldObject: tenant('ada') };
    // Too deep for JSON.stringify here: spliced in as text.
    const deep = `{"apiVersion":"crownlabs.polito.it/v1alpha2","kind":"Tenant","metadata":{"name":"ada"},"spec":${'{"x":'.repeat(100_000)}{}${'}'.repeat(100_000)}}`;
    const answered: [string, Record<string, unknown>, RegExp][] = [
      ['groups not a list', { ...good, userInfo: { username: 'bob', groups: 'system:masters' } }, /request.userInfo.groups is not a list/],
      ['groups with a non-string', { ...good, userInfo: { username: 'bob', groups: [1] } }, /request.userInfo.groups is not a list/],
      ['username not a string', { ...good, userInfo: { username: ['bob'] } }, /request.userInfo.username is not a string/],
      ['a huge username', { ...good, userInfo: { username: 'b'.repeat(1 << 20) } }, /request.userInfo.username is not a string of at most 4096/],
      ['extra not a map of lists', { ...good, userInfo: { username: 'bob', extra: { a: 'b' } } }, /request.userInfo.extra/],
      ['an unknown operation', { ...good, operation: 'PATCH' }, /request.operation is not one of/],
      ['a huge name', { ...good, name: 'a'.repeat(1 << 20) }, /request.name is not a string of at most 253/],
      ['the kind of another object', { ...good, kind: { group: '', version: 'v1', kind: 'Pod' } }, /not a crownlabs.polito.it Tenant/],
      ['an object that is not a Tenant', { ...good, object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'ada' } } }, /object is v1 Secret, not a crownlabs.polito.it Tenant/],
      ['an object nested 100 000 deep', { ...good, object: 'DEEP', oldObject: 'DEEP' }, /nested deeper than 64 levels/],
      ['dryRun not a boolean', { ...good, dryRun: 'yes' }, /request.dryRun is not a boolean/],
    ];
    for (const path of [MUTATE_PATH, VALIDATE_PATH]) {
      for (const [what, request, message] of answered) {
        const res = await post(server.port, first.caPem, path, admissionReview(request).replaceAll('"DEEP"', deep));
        expect(res.code, `${path}: ${what}`).toBe(200);
        const response = JSON.parse(res.text).response;
        expect(response, `${path}: ${what}`).toMatchObject({ uid: 'u9', allowed: false, status: { code: 400 } });
        expect(response.status.message, `${path}: ${what}`).toMatch(message);
        expect(response.status.message.length).toBeLessThan(2048);
      }
    }
    const unanswerable: [string, string, RegExp][] = [
      ['a request that is a list', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: [] }), /has no request/],
      ['a uid that is not a string', admissionReview({ uid: 7, operation: 'CREATE' }), /request.uid is missing/],
      ['a huge uid', admissionReview({ uid: 'u'.repeat(1 << 20), operation: 'CREATE' }), /request.uid is longer than 128/],
      ['a body that is a string', JSON.stringify('AdmissionReview'), /body is not a JSON object/],
    ];
    for (const [what, body, message] of unanswerable) {
      const res = await post(server.port, first.caPem, MUTATE_PATH, body);
      expect([res.code, what]).toEqual([400, what]);
      expect(res.text).toMatch(message);
      expect(res.text.length).toBeLessThan(2048);
    }
  });

  for (const chunked of [false, true]) {
    it(`a body over the cap (8 MiB) ${chunked ? 'chunked' : 'with Content-Length'}: the client reads 413, then the connection closes`, async () => {
      const size = 8 * 1024 * 1024 + 4096;
      const res = await new Promise<{ code: number; connection?: string; text: string }>((resolve, reject) => {
        const headers: Record<string, string | number> = { 'Content-Type': 'application/json', ...(chunked ? {} : { 'Content-Length': size }) };
        const req = https.request({ host: '127.0.0.1', port: server.port, path: MUTATE_PATH, method: 'POST', ca: first.caPem, agent: false, headers }, (r) => {
          let text = '';
          r.on('data', (c: Buffer) => (text += c.toString()));
          r.on('end', () => resolve({ code: r.statusCode ?? 0, connection: r.headers.connection, text }));
        });
        req.on('error', reject);
        const body = Buffer.alloc(size, ' ');
        if (chunked) {
          for (let i = 0; i < size; i += 64 * 1024) req.write(body.subarray(i, i + 64 * 1024));
          req.end();
        } else req.end(body);
      });
      expect(res).toEqual({ code: 413, connection: 'close', text: `request body larger than ${8 * 1024 * 1024} bytes\n` });
    });
  }

  it('a rotated certificate in the cert dir is served without a restart', async () => {
    const second = await makeServingCert(path.join(dir, 'ca2'));
    const body = admissionReview({ uid: 'u4', name: 'ada', operation: 'CREATE', userInfo: {}, object: tenant('ada') });
    await expect(post(server.port, second.caPem, MUTATE_PATH, body)).rejects.toThrow();
    // Written as cert-manager's volume update would land: key, then certificate.
    await writeFile(path.join(certDir, 'tls.key'), second.keyPem);
    await writeFile(path.join(certDir, 'tls.crt'), second.certPem);
    await expect.poll(() => post(server.port, second.caPem, MUTATE_PATH, body).then((r) => r.code, () => 0), { timeout: 15_000, interval: 200 }).toBe(200);
    await expect(post(server.port, first.caPem, MUTATE_PATH, body)).rejects.toThrow();
    expect(await server.reloadCertificate()).toBe(false);
  });
});

describe('webhook server: bad certificate directory', () => {
  it('refuses to start without tls.crt/tls.key, naming the file', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'wh-empty-'));
    try {
      await expect(
        startWebhookServer({ port: 0, host: '127.0.0.1', certDir: empty, targetLabel: { key: K, value: 'x' }, baseWorkspaces: [], bypassGroups: [], getTenant: () => Promise.reject(new Error('x')) }),
      ).rejects.toThrow(/tls\.(crt|key)/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
