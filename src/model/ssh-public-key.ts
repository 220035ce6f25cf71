/**
 * The one shape of a Tenant's `spec.publicKeys` entry that reaches an authorized_keys file (the
 * bastion's, a VM's cloud-init): `<type> <base64> [comment]` with a key type OpenSSH knows.
 * Anything else — an options prefix (`command="…"`, `from=`, `cert-authority`), an unknown or
 * retired type (ssh-dss), a second line — is dropped by the caller with a warning naming the
 * Tenant. Certificate types (`*-cert-v01@openssh.com`) are refused too: authorized_keys lists
 * keys, and trusting a certificate is a `cert-authority` line, which a Tenant must not write.
 */

export const SSH_KEY_TYPES: readonly string[] = [
  'ssh-ed25519',
  'ssh-rsa',
  'ecdsa-sha2-nistp256',
  'ecdsa-sha2-nistp384',
  'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com',
  'sk-ecdsa-sha2-nistp256@openssh.com',
];
const KNOWN = new Set(SSH_KEY_TYPES);
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

export type ParsedPublicKey = { type: string; key: string; comment?: string } | { reason: string };

/** Fields split on runs of whitespace (so a newline cannot start another line); the comment is the rest, one space apart. */
export function parsePublicKey(entry: string): ParsedPublicKey {
  const fields = entry.trim().split(/\s+/).filter(Boolean);
  if (fields.length < 2) return { reason: 'fewer than 2 space-separated fields' };
  const [type, key, ...rest] = fields as [string, string, ...string[]];
  if (!KNOWN.has(type)) return { reason: `"${type.slice(0, 40)}" is not a known SSH key type (${SSH_KEY_TYPES.join(', ')})` };
  if (!BASE64.test(key)) return { reason: 'the key is not base64' };
  return rest.length ? { type, key, comment: rest.join(' ') } : { type, key };
}

/** The entry as one authorized_keys line, `<type> <base64> [comment]`, or why it is dropped. */
export function publicKeyLine(entry: string): { line: string } | { reason: string } {
  const p = parsePublicKey(entry);
  if ('reason' in p) return p;
  return { line: [p.type, p.key, ...(p.comment ? [p.comment] : [])].join(' ') };
}
