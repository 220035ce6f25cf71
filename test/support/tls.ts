// A throwaway CA and a serving certificate for 127.0.0.1, made with the openssl CLI, for tests of
// HTTPS servers the API server (or a test) must trust.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ServingCert {
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  certPem: string;
  keyPem: string;
}

/**
 * Makes a CA and a serving certificate (IP SAN 127.0.0.1, DNS SAN localhost) in `dir`.
 * When `certDir` is given, writes `tls.crt` / `tls.key` there (controller-runtime's layout).
 */
export async function makeServingCert(dir: string, certDir?: string, commonName = 'webhook-test'): Promise<ServingCert> {
  await mkdir(dir, { recursive: true });
  const f = (n: string) => path.join(dir, n);
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.crt'), '-days', '2', '-subj', `/CN=${commonName}-ca`]);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('tls.key'), '-out', f('tls.csr'), '-subj', `/CN=${commonName}`]);
  await writeFile(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  await run('openssl', ['x509', '-req', '-in', f('tls.csr'), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('tls.crt'), '-days', '2', '-extfile', f('ext.cnf')]);
  const [caPem, certPem, keyPem] = await Promise.all([readFile(f('ca.crt'), 'utf8'), readFile(f('tls.crt'), 'utf8'), readFile(f('tls.key'), 'utf8')]);
  if (certDir) {
    await mkdir(certDir, { recursive: true });
    await writeFile(path.join(certDir, 'tls.key'), keyPem);
    await writeFile(path.join(certDir, 'tls.crt'), certPem);
  }
  return { caPem, certPem, keyPem };
}
