/**
 * X.509 certificates made in-process (ECDSA P-256, SHA-256): the metrics server's serving
 * certificate when no directory is given (as controller-runtime makes one), and CAs and client
 * certificates for tests. A minimal DER writer: only what a certificate needs.
 */
import { createPublicKey, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';

const len = (n: number) => (n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]));
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), len(body.length), body]);
};
const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);
const oid = (dotted: string) => {
  const [a, b, ...rest] = dotted.split('.').map(Number) as [number, number, ...number[]];
  const bytes = [40 * a + b];
  for (const n of rest) {
    const chunk = [n & 0x7f];
    for (let v = n >>> 7; v > 0; v >>>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return tlv(0x06, Buffer.from(bytes));
};
const integer = (b: Buffer) => tlv(0x02, b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b);
const bitString = (b: Buffer, unused = 0) => tlv(0x03, Buffer.from([unused]), b);
const octets = (b: Buffer) => tlv(0x04, b);
const time = (d: Date) => {
  const s = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(s.slice(2))) : tlv(0x18, Buffer.from(s));
};
const name = (cn: string) => seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(cn, 'utf8')))));
const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), octets(value));
const ECDSA_SHA256 = seq(oid('1.2.840.10045.4.3.2'));

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::') as [string, string?];
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.from(groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]));
}

export interface CertificateRequest {
  commonName: string;
  /** DNS names and IP addresses of a serving certificate (subjectAltName). */
  hosts?: readonly string[];
  /** A CA certificate (may sign others). */
  isCA?: boolean;
  /** Signer: its certificate's subject and key; default self-signed. */
  issuer?: { commonName: string; key: KeyObject };
  validDays?: number;
  now?: Date;
}

export interface MadeCertificate {
  /** PEM of the certificate and of its PKCS#8 key. */
  cert: string;
  key: string;
  keyObject: KeyObject;
}

export function makeCertificate(req: CertificateRequest): MadeCertificate {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const now = req.now ?? new Date();
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and no leading zero byte (DER)
  const exts = [
    extension('2.5.29.19', true, req.isCA ? seq(tlv(0x01, Buffer.from([0xff]))) : seq()),
    // keyUsage: keyCertSign and cRLSign for a CA, digitalSignature otherwise.
    extension('2.5.29.15', true, req.isCA ? bitString(Buffer.from([0x06]), 1) : bitString(Buffer.from([0x80]), 7)),
  ];
  if (!req.isCA) exts.push(extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'), oid('1.3.6.1.5.5.7.3.2'))));
  if (req.hosts?.length) exts.push(extension('2.5.29.17', false, seq(...req.hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, 'ascii')))))));
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))),
    integer(serial),
    ECDSA_SHA256,
    name(req.issuer?.commonName ?? req.commonName),
    seq(time(new Date(now.getTime() - 3600_000)), time(new Date(now.getTime() + (req.validDays ?? 365) * 86400_000))),
    name(req.commonName),
    spki,
    tlv(0xa3, seq(...exts)),
  );
  const signature = sign('sha256', tbs, req.issuer?.key ?? privateKey);
  const der = seq(tbs, ECDSA_SHA256, bitString(signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n?$/, '\n')}-----END CERTIFICATE-----\n`;
  return { cert, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, keyObject: privateKey };
}
