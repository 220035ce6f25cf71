import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { userPodsAuth, USER_PODS_TOKEN_ENV } from '../../../src/cli/user-pods-api.ts';
import { makeCertificate } from '../../../src/kube/self-signed-cert.ts';
import { listenTls } from '../../../src/kube/tls-files.ts';
import { BearerToken, frontEndAuth, isLoopbackHost, type FrontEndAuth } from '../../../src/user-pods/auth.ts';
import { userPodsHandler } from '../../../src/user-pods/server.ts';
import type { UserPodsService } from '../../../src/user-pods/service.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'user-pods-auth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A service that records every call: a refused request must reach none. */
function recordingService() {
  const calls: string[] = [];
  const service = {
    getPods: async (u: string) => (calls.push(`getPods ${u}`), [{ pod_name: 'p', tokens: { t: 'secret' } }]),
    deleteAllUser: async (u: string) => (calls.push(`deleteAllUser ${u}`), { deleted: true }),
    getPodIpOwner: async (ip: string) => (calls.push(`getPodIpOwner ${ip}`), 'ann@ku.dk'),
  } as unknown as UserPodsService;
  return { calls, service };
}

async function serve(auth: FrontEndAuth, service: UserPodsService) {
  const server = http.createServer(userPodsHandler(service, { testingHost: '10.0.0.20', log: pino({ level: 'silent' }), auth }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('user pods API: a bearer token guards every endpoint but /healthz', () => {
  it('without the token, with a wrong one or another scheme: 401 and no service call; with it: the answer', async () => {
    const { calls, service } = recordingService();
    const api = await serve(frontEndAuth({ token: BearerToken.fromValue('s3cret-token') }), service);
    try {
      const post = (p: string, headers: Record<string, string> = {}) => fetch(`${api.url}${p}`, { method: 'POST', headers, body: JSON.stringify({ user_id: 'ann@ku.dk' }) });
      for (const headers of [{} as Record<string, string>, { Authorization: 'Bearer wrong' }, { Authorization: 'Bearer s3cret-token-and-more' }, { Authorization: 'Basic czNjcmV0LXRva2Vu' }, { Authorization: 's3cret-token' }]) {
        for (const p of ['/get_pods', '/delete_all_user']) {
          const r = await post(p, headers);
          expect(r.status).toBe(401);
          expect(r.headers.get('www-authenticate')).toBe('Bearer');
          expect(((await r.json()) as { error: string }).error).toMatch(/^unauthorized: /);
        }
        expect((await fetch(`${api.url}/get_podip_owner?ip=10.0.0.1`, { headers })).status).toBe(401);
      }
      expect(calls).toEqual([]);
      // The kubelet's probe carries no token.
      expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
      const ok = await post('/get_pods', { Authorization: 'Bearer s3cret-token' });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toEqual([{ pod_name: 'p', tokens: { t: 'secret' } }]);
      expect((await fetch(`${api.url}/get_podip_owner?ip=10.0.0.1`, { headers: { Authorization: 'bearer s3cret-token' } })).status).toBe(200);
      expect(calls).toEqual(['getPods ann@ku.dk', 'getPodIpOwner 10.0.0.1']);
    } finally {
      await api.close();
    }
  });

  it('a token file is re-read when it changes (a rotated Secret), and an emptied file keeps the last token', () => {
    const file = path.join(dir, 'token');
    writeFileSync(file, 'first\n');
    let now = 0;
    const token = BearerToken.fromFile(file, () => now);
    expect(token.matches('first')).toBe(true);
    // A mounted Secret's update: a new file renamed over the old one.
    writeFileSync(`${file}.new`, 'second');
    renameSync(`${file}.new`, file);
    now += 1000;
    expect(token.matches('first')).toBe(false);
    expect(token.matches('second')).toBe(true);
    writeFileSync(file, '   \n');
    now += 1000;
    expect(token.matches('second')).toBe(true);
  });

  it('an unreadable or empty token file is a start-up error naming the file', () => {
    expect(() => BearerToken.fromFile(path.join(dir, 'missing'))).toThrow(/missing: cannot read the token: ENOENT/);
    writeFileSync(path.join(dir, 'empty'), '\n');
    expect(() => BearerToken.fromFile(path.join(dir, 'empty'))).toThrow(/empty: the token file is empty/);
  });
});

describe('user pods API: client certificates (mTLS)', () => {
  it('only a certificate signed by the configured CA passes; others and none are 401; /healthz needs none', async () => {
    const ca = makeCertificate({ commonName: 'front-end-ca', isCA: true });
    const otherCa = makeCertificate({ commonName: 'front-end-ca', isCA: true });
    const serving = makeCertificate({ commonName: 'user-pods-api', hosts: ['127.0.0.1'], issuer: { commonName: 'front-end-ca', key: ca.keyObject } });
    const good = makeCertificate({ commonName: 'front-end', issuer: { commonName: 'front-end-ca', key: ca.keyObject } });
    const forged = makeCertificate({ commonName: 'front-end', issuer: { commonName: 'front-end-ca', key: otherCa.keyObject } });
    const certDir = mkdtempSync(path.join(dir, 'tls-'));
    writeFileSync(path.join(certDir, 'tls.crt'), serving.cert);
    writeFileSync(path.join(certDir, 'tls.key'), serving.key);
    writeFileSync(path.join(certDir, 'ca.crt'), ca.cert);
    const { calls, service } = recordingService();
    const handler = userPodsHandler(service, { testingHost: '10.0.0.20', log: pino({ level: 'silent' }), auth: frontEndAuth({ clientCertificate: true }) });
    const { server, address } = await listenTls('127.0.0.1:0', handler, { certDir, clientCaFile: path.join(certDir, 'ca.crt') });
    const port = Number(address.split(':').pop());
    const call = (p: string, client?: { cert: string; key: string }) =>
      new Promise<number>((resolve, reject) => {
        const r = https.request({ host: '127.0.0.1', port, path: p, method: p === '/healthz' ? 'GET' : 'POST', ca: ca.cert, agent: false, ...(client ?? {}) }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        r.on('error', reject);
        r.end(p === '/healthz' ? undefined : JSON.stringify({ user_id: 'ann@ku.dk' }));
      });
    try {
      expect(await call('/get_pods')).toBe(401);
      expect(await call('/get_pods', forged)).toBe(401);
      expect(calls).toEqual([]);
      expect(await call('/healthz')).toBe(200);
      expect(await call('/get_pods', good)).toBe(200);
      expect(calls).toEqual(['getPods ann@ku.dk']);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('crownlabs user-pods-api: authentication flags', () => {
  const tokenFile = path.join(dir, 'flags-token');
  writeFileSync(tokenFile, 'tok');
  it('refuses to listen beyond loopback without authentication, naming the ways out', () => {
    for (const listen of [':8080', '0.0.0.0:8080', '10.1.2.3:8080', '[::]:8080'])
      expect(userPodsAuth({ listen }, {})).toMatch(/^refusing to listen on .* without authentication: .*--auth-token-file .*--insecure-no-auth/);
  });
  it('loopback without authentication, a token (file or environment), or an explicit opt-out: starts', () => {
    for (const listen of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080']) expect(userPodsAuth({ listen }, {})).toEqual({ auth: expect.objectContaining({ mechanisms: [] }) });
    expect(userPodsAuth({ listen: ':8080', authTokenFile: tokenFile }, {})).toEqual({ auth: expect.objectContaining({ mechanisms: ['bearer token'] }) });
    expect(userPodsAuth({ listen: ':8080' }, { [USER_PODS_TOKEN_ENV]: 'tok' })).toEqual({ auth: expect.objectContaining({ mechanisms: ['bearer token'] }) });
    expect(userPodsAuth({ listen: ':8080', tlsCertDir: dir, clientCa: tokenFile }, {})).toEqual({ auth: expect.objectContaining({ mechanisms: ['client certificate'] }) });
    expect(userPodsAuth({ listen: ':8080', insecureNoAuth: true }, {})).toEqual({ auth: expect.objectContaining({ mechanisms: [] }), warning: expect.stringMatching(/no authentication/) });
  });
  it('contradictory or incomplete flags are usage errors', () => {
    expect(userPodsAuth({ listen: ':8080', clientCa: tokenFile }, {})).toMatch(/--client-ca needs --tls-cert-dir/);
    expect(userPodsAuth({ listen: ':8080', authTokenFile: tokenFile }, { [USER_PODS_TOKEN_ENV]: 'x' })).toMatch(/not both/);
    expect(userPodsAuth({ listen: ':8080', authTokenFile: tokenFile, insecureNoAuth: true }, {})).toMatch(/contradicts/);
    expect(userPodsAuth({ listen: ':8080' }, { [USER_PODS_TOKEN_ENV]: ' ' })).toBe(`${USER_PODS_TOKEN_ENV}: the token is empty`);
  });
  it('loopback hosts are only 127/8, ::1 and localhost', () => {
    expect(['127.0.0.1', '127.5.0.1', '::1', '[::1]', 'localhost'].every(isLoopbackHost)).toBe(true);
    expect(['0.0.0.0', '::', '', '10.0.0.1', '127.0.0.1.nip.io', '::ffff:127.0.0.1'].some(isLoopbackHost)).toBe(false);
  });
});
