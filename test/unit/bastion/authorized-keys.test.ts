import { mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { authorizedKeyLine, lineComment, syncAuthorizedKeys, updateAuthorizedKeys } from '../../../src/bastion/authorized-keys.ts';
import { readKeysFile, writeKeysFileAtomically } from '../../../src/bastion/keys-file.ts';

describe('§12 authorized_keys: one Tenant event', () => {
  it('appends `<algo> <key> <tenant>` for each key, dropping the original comment, no trailing newline', () => {
    const r = updateAuthorizedKeys('', { name: 'john.doe', publicKeys: ['ssh-ed25519 AAAAC3Nz john@laptop', 'ssh-rsa AAAAB3Nz'] });
    expect(r.text).toBe('ssh-ed25519 AAAAC3Nz john.doe\nssh-rsa AAAAB3Nz john.doe');
    expect(r.invalid).toEqual([]);
  });

  it('removes the lines whose comment equals the tenant name and keeps the order of the others', () => {
    const file = ['ssh-rsa A1 alice', 'ssh-rsa J1 john.doe', 'ssh-rsa B1 bob', 'ssh-rsa J2 john.doe', 'ssh-rsa C1 carol'].join('\n');
    const r = updateAuthorizedKeys(file, { name: 'john.doe', publicKeys: ['ssh-ed25519 NEW'] });
    // Upstream swap-removes (carol would move up); we keep alice, bob, carol in place.
    expect(r.text).toBe(['ssh-rsa A1 alice', 'ssh-rsa B1 bob', 'ssh-rsa C1 carol', 'ssh-ed25519 NEW john.doe'].join('\n'));
  });

  it('an event whose keys are already in the file leaves every line where it is', () => {
    const file = ['ssh-rsa J1 john.doe', 'ssh-rsa A1 alice', 'ssh-rsa J2 john.doe'].join('\n');
    const same = updateAuthorizedKeys(file, { name: 'john.doe', publicKeys: ['ssh-rsa J1 x', 'ssh-rsa J2'] });
    expect(same.text).toBe(file);
    const reordered = updateAuthorizedKeys(file, { name: 'john.doe', publicKeys: ['ssh-rsa J2', 'ssh-rsa J1'] });
    expect(reordered.text).toBe(['ssh-rsa A1 alice', 'ssh-rsa J2 john.doe', 'ssh-rsa J1 john.doe'].join('\n'));
  });

  it('a deleted Tenant only loses its lines', () => {
    const r = updateAuthorizedKeys('ssh-rsa A1 alice\nssh-rsa J1 john.doe', { name: 'john.doe' }, false);
    expect(r.text).toBe('ssh-rsa A1 alice');
  });

  it('the comment is everything after the second space, so "john.doe extra" is not john.doe', () => {
    expect(lineComment('ssh-rsa K john.doe extra')).toBe('john.doe extra');
    const r = updateAuthorizedKeys('ssh-rsa K john.doe extra', { name: 'john.doe' }, false);
    expect(r.text).toBe('ssh-rsa K john.doe extra');
  });

  it('keeps lines with fewer than three fields (malformed, blank, comments) untouched', () => {
    const file = ['# managed by hand', '', 'garbage', 'ssh-rsa ONLYKEY', 'ssh-rsa J1 john.doe'].join('\n');
    expect(updateAuthorizedKeys(file, { name: 'john.doe' }, false).text).toBe(['# managed by hand', '', 'garbage', 'ssh-rsa ONLYKEY'].join('\n'));
  });

  it('an empty result is an empty file', () => {
    expect(updateAuthorizedKeys('ssh-rsa J1 john.doe', { name: 'john.doe', publicKeys: [] }).text).toBe('');
  });

  it.each([
    ['ssh-rsa', /fewer than 2/],
    ['', /fewer than 2/],
    ['command="rm -rf /" ssh-rsa AAAA', /not a known SSH key type/],
    // Passed the character check before: an sshd option or a retired type in the algorithm's place.
    ['no-pty AAAA', /"no-pty" is not a known SSH key type/],
    ['ssh-dss AAAA', /"ssh-dss" is not a known SSH key type/],
    ['ssh-rsa not*base64', /not base64/],
  ])('skips and reports an invalid key %j', (key, reason) => {
    const r = updateAuthorizedKeys('', { name: 't', publicKeys: ['ssh-rsa GOOD', key] });
    expect(r.text).toBe('ssh-rsa GOOD t');
    expect(r.invalid).toHaveLength(1);
    expect(r.invalid[0]).toMatchObject({ tenant: 't', index: 1 });
    expect(r.invalid[0].reason).toMatch(reason);
  });

  it('splits key fields on runs of whitespace (a double space does not make an empty key)', () => {
    expect(authorizedKeyLine('  ssh-rsa   AAAA  c ', 't')).toEqual({ line: 'ssh-rsa AAAA t' });
  });

  it('a key cannot inject a second line', () => {
    const r = updateAuthorizedKeys('', { name: 'mallory', publicKeys: ['ssh-rsa AAAA\nssh-rsa BBBB alice'] });
    expect(r.text).toBe('ssh-rsa AAAA mallory');
  });
});

describe('§12 authorized_keys: full sync from all Tenants', () => {
  it('replaces every known tenant\'s lines, tenants in name order, other lines kept in place', () => {
    const file = ['ssh-rsa OLD bob', '# by hand', 'ssh-rsa X someone-else', 'ssh-rsa OLDA alice'].join('\n');
    const r = syncAuthorizedKeys(file, [
      { name: 'bob', publicKeys: ['ssh-rsa B1', 'ssh-rsa B2'] },
      { name: 'alice', publicKeys: ['ssh-ed25519 A1 x'] },
      { name: 'carol', publicKeys: ['bad'] },
    ]);
    expect(r.text).toBe(['# by hand', 'ssh-rsa X someone-else', 'ssh-ed25519 A1 alice', 'ssh-rsa B1 bob', 'ssh-rsa B2 bob'].join('\n'));
    expect(r.invalid.map((i) => i.tenant)).toEqual(['carol']);
  });
  it('is idempotent and agrees with applying the events one by one', () => {
    const tenants = [{ name: 'b', publicKeys: ['ssh-rsa B'] }, { name: 'a', publicKeys: ['ssh-rsa A'] }];
    const once = syncAuthorizedKeys('', tenants).text;
    expect(syncAuthorizedKeys(once, tenants).text).toBe(once);
    const events = tenants.slice().sort((x, y) => x.name.localeCompare(y.name)).reduce((t, ten) => updateAuthorizedKeys(t, ten).text, '');
    expect(events).toBe(once);
  });
});

describe('§12 the authorized_keys file', () => {
  it('is written atomically (no temporary file left) with mode 0644, and a missing file reads as empty', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    const file = join(dir, 'authorized_keys');
    expect(await readKeysFile(file)).toBe('');
    await writeKeysFileAtomically(file, 'ssh-rsa A t');
    await writeKeysFileAtomically(file, 'ssh-rsa B t');
    expect(readFileSync(file, 'utf8')).toBe('ssh-rsa B t');
    expect(readdirSync(dir)).toEqual(['authorized_keys']);
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });
});
