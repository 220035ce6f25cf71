import fc from 'fast-check';
import jsYaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { cloudInitUserData } from '../../../constructs/instance/cloud-init.ts';
import type { NfsShare } from '../../../src/model/mydrive.ts';
import { publicKeyLine } from '../../../src/model/ssh-public-key.ts';
import { lab, render } from '../../support/lab.ts';
import { pyyamlLoad } from '../../support/pyyaml.ts';
import { PROPERTY_SEED, sample, yamlString } from '../../support/yaml-strings.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const MARY = 'ssh-rsa AAAAmary mary@pc';
const PASSWD = '$6$rounds=4096$tBS1sNBpnw6feehB$lS9b7VKH6WMAFOB0SrHCgjD2BKs9CegDe51EiMRWbxQeCVnoGL4u0jNaRsYhvVoBFaRlXZkNsxfFhXvCBaNeQ.';

/** What cloud-init must read: the fixed user data with exactly these keys, in order, and nothing else. */
function expectedUserData(keys: readonly string[], nfs?: NfsShare): unknown {
  const withKeys = keys.length > 0 ? { ssh_authorized_keys: keys } : {};
  return {
    users: [{ name: 'crownlabs', lock_passwd: false, passwd: PASSWD, sudo: 'ALL=(ALL) NOPASSWD:ALL', ...withKeys, shell: '/bin/bash' }],
    network: { version: 2, id0: { dhcp4: true } },
    mounts: nfs ? [[`${nfs.server}:${nfs.path}`, '/media/mydrive', 'nfs', 'rw,tcp,hard,intr,rsize=8192,wsize=8192,timeo=14', '0', '0']] : [],
    ...withKeys,
  };
}

/** The cloud-init user data of a VM Instance whose owner (john.doe) has the given key; mary.manager manages the workspace. */
function renderedUserData(johnKey: string): string {
  // YAML escapes, so that the input file holds the key exactly (JSON would leave NEL/LS raw).
  const escaped = JSON.stringify(johnKey).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const input = lab({ env: { environmentType: 'VirtualMachine' } });
  expect(input).toContain('"ssh-ed25519 AAAAjohn john@pc"');
  const r = render(input.replace('"ssh-ed25519 AAAAjohn john@pc"', escaped));
  expect(r.problems.filter((p) => p.severity === 'error')).toEqual([]);
  return Buffer.from((r.get('Secret', 'inst-one') as Any).data.userdata, 'base64').toString('utf8');
}

describe('cloud-init user data against injection (#14.5)', () => {
  it("a Tenant's key with NEL or LS cannot add runcmd or drop a manager's key (PyYAML, as cloud-init reads it)", () => {
    const payloads = [
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJohn john\u0085runcmd:\u0085- touch /tmp/pwned\u0085swallowed:\u0085    - keys:',
      'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJohn john\u2028runcmd:\u2028- touch /tmp/pwned\u2028swallowed:\u2028    - keys:',
    ];
    const texts = payloads.map(renderedUserData);
    const read = pyyamlLoad(texts);
    payloads.forEach((entry, i) => {
      // As the key enters the plan: one `<type> <key> <comment>` line (LS, a JS whitespace, becomes a space).
      const payload = (publicKeyLine(entry) as { line: string }).line;
      expect('ok' in read[i], texts[i]).toBe(true);
      const data = (read[i] as { ok: Record<string, Any> }).ok;
      expect(Object.keys(data), texts[i]).toEqual(['users', 'network', 'mounts', 'ssh_authorized_keys']);
      expect(data.runcmd).toBeUndefined();
      expect(data.ssh_authorized_keys).toEqual([payload, MARY]);
      expect(data.users[0].ssh_authorized_keys).toEqual([payload, MARY]);
      expect(data).toEqual(expectedUserData([payload, MARY], { server: 'nfs.example', path: '/export/john-doe-drive' }));
    });
  });

  const userData = fc.record({
    keys: fc.array(yamlString, { maxLength: 4 }),
    nfs: fc.option(fc.record({ server: yamlString, path: yamlString }), { nil: undefined }),
  });
  const RUNS = 2000;

  it('property: random keys and shares read back as exactly those keys, in order, through yaml (1.1 and 1.2) and js-yaml', () => {
    fc.assert(
      fc.property(userData, ({ keys, nfs }) => {
        const text = cloudInitUserData(keys, nfs);
        const want = expectedUserData(keys, nfs);
        expect(parse(text), text).toEqual(want);
        expect(parse(text, { version: '1.1' }), text).toEqual(want);
        expect(jsYaml.load(text), text).toEqual(want);
      }),
      { seed: PROPERTY_SEED, numRuns: RUNS },
    );
  });

  it('property: random keys and shares read back as exactly those keys, in order, through PyYAML', () => {
    const cases = sample(userData, RUNS);
    const texts = cases.map(({ keys, nfs }) => cloudInitUserData(keys, nfs));
    const read = pyyamlLoad(texts);
    cases.forEach(({ keys, nfs }, i) => {
      expect(read[i], `seed ${PROPERTY_SEED}, case ${i}: ${JSON.stringify({ keys, nfs })} written as\n${texts[i]}`).toEqual({ ok: expectedUserData(keys, nfs) });
    });
  });
});
