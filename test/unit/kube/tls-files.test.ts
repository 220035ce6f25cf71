import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, describe, expect, it } from 'vitest';
import { makeCertificate } from '../../../src/kube/self-signed-cert.ts';
import { listenTls } from '../../../src/kube/tls-files.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'tls-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function servedName(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = https.get({ host: '127.0.0.1', port, rejectUnauthorized: false, agent: false }, (res) => {
      resolve((res.socket as TLSSocket).getPeerCertificate().subject.CN as string);
      res.resume();
    });
    r.on('error', reject);
  });
}

describe('HTTPS from a cert dir', () => {
  it('a rotated tls.crt/tls.key pair is served without a restart; an unreadable one keeps the last', async () => {
    const write = (cn: string) => {
      const c = makeCertificate({ commonName: cn, hosts: ['127.0.0.1'] });
      writeFileSync(path.join(dir, 'tls.crt'), c.cert);
      writeFileSync(path.join(dir, 'tls.key'), c.key);
    };
    write('first');
    const { server, address } = await listenTls('127.0.0.1:0', (_q, s) => s.end('ok'), { certDir: dir }, undefined, 50);
    const port = Number(address.split(':').pop());
    try {
      expect(await servedName(port)).toBe('first');
      write('second');
      await new Promise((r) => setTimeout(r, 300));
      expect(await servedName(port)).toBe('second');
      writeFileSync(path.join(dir, 'tls.key'), 'not a key');
      await new Promise((r) => setTimeout(r, 300));
      expect(await servedName(port)).toBe('second');
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
  it('a missing file is an error naming it', async () => {
    await expect(listenTls('127.0.0.1:0', () => undefined, { certDir: path.join(dir, 'none') })).rejects.toThrow(/none\/tls\.crt: ENOENT/);
  });
});
