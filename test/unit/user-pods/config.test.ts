import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadUserPodsConfig } from '../../../src/user-pods/config.ts';
import { checkWhitelist, parseManifest, parseManifestPrefix, type ManifestPrefix } from '../../../src/user-pods/manifest.ts';

const dir = mkdtempSync(join(tmpdir(), 'userpods-config-'));
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};

describe('seed 004 configuration', () => {
  it('defaults are the seed config.yaml values; durations become milliseconds', () => {
    const { config, problems } = loadUserPodsConfig();
    expect(problems).toEqual([]);
    expect(config).toMatchObject({ defaultRestartPolicy: 'Never', timeoutCreate: 90_000, timeoutDelete: 90_000, tokenByteLimit: 4096, ingressWildcardSecret: 'user-pods-wildcard' });
  });
  it('reads a YAML file, keys case-insensitive as viper reads them', () => {
    const p = file('c.yaml', 'namespace: sciencedata-dev\nwhitelistmanifestregex: ^http://127\\.0\\.0\\.1/\ntimeoutCreate: 1h2m3s\nhostnameList:\n  - {hostname: silo7.sciencedata.dk, address: 10.0.0.20}\n');
    const { config, problems } = loadUserPodsConfig({ file: p });
    expect(problems).toEqual([]);
    expect(config.namespace).toBe('sciencedata-dev');
    expect(config.whitelistManifestRegex).toBe('^http://127\\.0\\.0\\.1/');
    expect(config.manifestUrlPrefixes).toEqual(['http://127.0.0.1/']);
    expect(config.timeoutCreate).toBe(3_723_000);
    expect(config.hostnameList).toEqual([{ hostname: 'silo7.sciencedata.dk', address: '10.0.0.20' }]);
  });
  it('reads JSON too, and BACKEND_<KEY> environment variables override the file', () => {
    const p = file('c.json', JSON.stringify({ ingressDomain: 'a.example', tokenByteLimit: 10 }));
    const { config, problems } = loadUserPodsConfig({ file: p, env: { BACKEND_INGRESSDOMAIN: 'pods.sciencedata.dk', BACKEND_TOKENBYTELIMIT: '20', BACKEND_HOSTNAMELIST: '[{"hostname":"h","address":"10.0.0.1"}]' } });
    expect(problems).toEqual([]);
    expect(config.ingressDomain).toBe('pods.sciencedata.dk');
    expect(config.tokenByteLimit).toBe(20);
    expect(config.hostnameList).toEqual([{ hostname: 'h', address: '10.0.0.1' }]);
  });
  it('reports every bad value with where it came from', () => {
    const p = file('bad.yaml', 'defaultRestartPolicy: Sometimes\ntokenByteLimit: -1\nnosuchKey: 1\n');
    const { problems } = loadUserPodsConfig({ file: p, env: { BACKEND_TIMEOUTDELETE: 'soon', BACKEND_TESTINGHOST: 'not-an-ip' } });
    const text = problems.join('\n');
    expect(text).toContain('defaultRestartPolicy: must be one of');
    expect(text).toContain('tokenByteLimit: must be >= 1');
    expect(text).toContain('unknown config key "nosuchKey" (known: ');
    expect(text).toContain('invalid duration "soon"');
    expect(text).toContain('testingHost: "not-an-ip" is not an IP address');
  });
  it('an unknown key suggests the nearest one (#17.2)', () => {
    const { problems } = loadUserPodsConfig({ file: file('typo.yaml', 'tokenByteLimt: 5\n') });
    expect(problems.join('\n')).toContain('unknown config key "tokenByteLimt": did you mean tokenByteLimit?');
  });
  it('trustedProxies: none by default; a JSON or comma-separated list of IPs and CIDRs; anything else is reported', () => {
    expect(loadUserPodsConfig().config.trustedProxies).toEqual([]);
    expect(loadUserPodsConfig({ env: { BACKEND_TRUSTEDPROXIES: '10.2.0.0/16, fd00::1' } }).config.trustedProxies).toEqual(['10.2.0.0/16', 'fd00::1']);
    expect(loadUserPodsConfig({ file: file('p.yaml', 'trustedProxies: [10.2.0.7]\n') }).config.trustedProxies).toEqual(['10.2.0.7']);
    const { problems } = loadUserPodsConfig({ env: { BACKEND_TRUSTEDPROXIES: '["10.0.0.0/33", "ingress", "10.0.0.1/8/9"]' } });
    expect(problems).toEqual([
      'trustedProxies[0]: "10.0.0.0/33" has a prefix length outside 0…32',
      'trustedProxies[1]: "ingress" is not an IP address or CIDR',
      'trustedProxies[2]: "10.0.0.1/8/9" is not an IP address or CIDR',
    ]);
  });
  it('a legacy whitelistManifestRegex that spells a plain URL prefix becomes manifestUrlPrefixes; any other regex is refused', () => {
    expect(loadUserPodsConfig().config.manifestUrlPrefixes).toEqual(['https://raw.githubusercontent.com/deic-dk/pod_manifests']);
    const legacy = loadUserPodsConfig({ env: { BACKEND_WHITELISTMANIFESTREGEX: '^http://127[.]0[.]0[.]1:18081\\/manifests/' } });
    expect(legacy).toMatchObject({ problems: [], config: { manifestUrlPrefixes: ['http://127.0.0.1:18081/manifests/'] } });
    for (const regex of ['(', 'https://raw[.]githubusercontent[.]com/.*', '^http://127\\.0\\.0\\.1:\\d+/', 'https://a|https://b', 'https://a.example/$']) {
      const { problems } = loadUserPodsConfig({ env: { BACKEND_WHITELISTMANIFESTREGEX: regex } });
      expect(problems.join('\n'), regex).toMatch(/whitelistManifestRegex: .* is not a plain URL prefix; .*manifestUrlPrefixes/);
    }
    // A prefix that stops inside the authority cannot say which port it means.
    expect(loadUserPodsConfig({ env: { BACKEND_WHITELISTMANIFESTREGEX: '^http://127[.]0[.]0[.]1:' } }).problems.join('\n')).toMatch(/ends before its port/);
  });
  it('manifestUrlPrefixes: a JSON or comma-separated list of http(s) prefixes; both settings at once are refused', () => {
    const { config, problems } = loadUserPodsConfig({ env: { BACKEND_MANIFESTURLPREFIXES: 'https://a.example/pods/, http://10.0.0.1:8080/m' } });
    expect(problems).toEqual([]);
    expect(config.manifestUrlPrefixes).toEqual(['https://a.example/pods/', 'http://10.0.0.1:8080/m']);
    const bad = loadUserPodsConfig({ env: { BACKEND_MANIFESTURLPREFIXES: '["ftp://a.example/", "https://u:p@a.example/", "https://a.example/?x=1", "https://a.example/%2e%2e/"]' } }).problems.join('\n');
    expect(bad).toContain('manifestUrlPrefixes[0]: "ftp://a.example/" is not http or https');
    expect(bad).toContain('manifestUrlPrefixes[1]: "https://u:p@a.example/" holds a user name or password');
    expect(bad).toContain('manifestUrlPrefixes[2]: "https://a.example/?x=1" holds a query');
    expect(bad).toContain('manifestUrlPrefixes[3]: "https://a.example/%2e%2e/" holds an encoded');
    const both = loadUserPodsConfig({ env: { BACKEND_MANIFESTURLPREFIXES: 'https://a.example/', BACKEND_WHITELISTMANIFESTREGEX: 'https://b[.]example/' } });
    expect(both.problems).toEqual(['whitelistManifestRegex and manifestUrlPrefixes are both set: keep only manifestUrlPrefixes']);
  });
});

describe('seed 004 manifests', () => {
  const prefixes = (...p: string[]) => p.map(parseManifestPrefix);
  const seed = prefixes('https://raw.githubusercontent.com/deic-dk/pod_manifests');
  const local = prefixes('http://127.0.0.1:18081/manifests/');
  it('a yaml_url under an allowed prefix is fetched from its normalised form', () => {
    expect(checkWhitelist('https://raw.githubusercontent.com/deic-dk/pod_manifests/main/jupyter.yaml', seed)).toBe('https://raw.githubusercontent.com/deic-dk/pod_manifests/main/jupyter.yaml');
    expect(checkWhitelist('https://raw.githubusercontent.com/deic-dk/pod_manifests', seed)).toBe('https://raw.githubusercontent.com/deic-dk/pod_manifests');
    expect(checkWhitelist('HTTPS://RAW.githubusercontent.com:443/deic-dk/pod_manifests/a/../b.yaml', seed)).toBe('https://raw.githubusercontent.com/deic-dk/pod_manifests/b.yaml');
    expect(checkWhitelist('http://127.0.0.1:18081/manifests/x.yaml?ref=main', local)).toBe('http://127.0.0.1:18081/manifests/x.yaml?ref=main');
  });
  // Each of these got past the regex whitelist (or would with a regex of that shape).
  const refused: [string, string, ManifestPrefix[]][] = [
    ['".." out of the prefix (normalised before the check)', 'http://127.0.0.1:18081/manifests/../evil/hostpath.yaml', local],
    ['"." and ".." in odd places', 'http://127.0.0.1:18081/manifests/./../evil.yaml', local],
    ['the allowed URL in the query of another host', 'https://evil.example/x?https://raw.githubusercontent.com/deic-dk/pod_manifests', seed],
    ['the allowed host as userinfo', 'https://raw.githubusercontent.com/deic-dk/pod_manifests@evil.example/p.yaml', seed],
    ['the allowed host with userinfo', 'https://user:pw@raw.githubusercontent.com/deic-dk/pod_manifests/p.yaml', seed],
    ['the allowed host as a subdomain', 'https://raw.githubusercontent.com.evil.example/deic-dk/pod_manifests/p.yaml', seed],
    ['a sibling path sharing the prefix text', 'https://raw.githubusercontent.com/deic-dk/pod_manifests-evil/p.yaml', seed],
    ['a port the prefix does not name', 'https://raw.githubusercontent.com:8443/deic-dk/pod_manifests/p.yaml', seed],
    ['another port than the prefix names', 'http://127.0.0.1:18082/manifests/p.yaml', local],
    ['plain http for an https prefix', 'http://raw.githubusercontent.com/deic-dk/pod_manifests/p.yaml', seed],
    ['an encoded dot segment', 'http://127.0.0.1:18081/manifests/%2e%2e/evil.yaml', local],
    ['an encoded slash', 'http://127.0.0.1:18081/manifests/..%2fevil.yaml', local],
    ['an encoded backslash', 'http://127.0.0.1:18081/manifests/..%5cevil.yaml', local],
    ['a double-encoded dot', 'http://127.0.0.1:18081/manifests/%252e%252e/evil.yaml', local],
    ['a backslash', 'http://127.0.0.1:18081/manifests/..\\evil.yaml', local],
    ['a backslash authority', 'http:\\\\127.0.0.1:18081/manifests/p.yaml', local],
    ['a path parameter', 'http://127.0.0.1:18081/manifests/..;/evil.yaml', local],
    ['a fragment', 'http://127.0.0.1:18081/manifests/p.yaml#x', local],
    ['a tab inside a dot segment', 'http://127.0.0.1:18081/manifests/.\t./evil.yaml', local],
    ['another scheme', 'ftp://127.0.0.1:18081/manifests/p.yaml', local],
    ['an empty authority (WHATWG would read the path as the host)', 'http:///127.0.0.1:18081/manifests/p.yaml', local],
    ['a scheme-relative-looking URL', 'http:/127.0.0.1:18081/manifests/p.yaml', local],
    ['not a URL', 'manifests/p.yaml', local],
  ];
  for (const [what, url, allowed] of refused) {
    it(`refused: ${what}`, () => {
      expect(() => checkWhitelist(url, allowed)).toThrow(/not matched by the manifest whitelist/);
    });
  }
  it('the regex whitelist as the seed wrote it passes nothing outside its prefix once converted', () => {
    const { config } = loadUserPodsConfig();
    const seedPrefixes = config.manifestUrlPrefixes.map(parseManifestPrefix);
    expect(() => checkWhitelist('https://evil.example/x?https://raw.githubusercontent.com/deic-dk/pod_manifests', seedPrefixes)).toThrow(/not matched/);
    expect(checkWhitelist('https://raw.githubusercontent.com/deic-dk/pod_manifests/main/p.yaml', seedPrefixes)).toContain('/deic-dk/pod_manifests/main/');
  });
  it('only one v1 Pod with a name and named containers is a manifest', () => {
    expect(() => parseManifest('kind: Deployment\napiVersion: apps/v1\n', 'u')).toThrow(/expected apiVersion v1 kind Pod/);
    expect(() => parseManifest('a: [', 'u')).toThrow(/invalid manifest/);
    expect(() => parseManifest('apiVersion: v1\nkind: Pod\nmetadata: {name: Bad_Name}\nspec: {containers: [{name: a}]}\n', 'u')).toThrow(/DNS label/);
    expect(() => parseManifest('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n', 'u')).toThrow(/at least one container/);
    expect(() => parseManifest('---\napiVersion: v1\nkind: Pod\n---\napiVersion: v1\nkind: Pod\n', 'u')).toThrow(/one YAML document/);
    expect(parseManifest('apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, image: b}]}\n', 'u').metadata.name).toBe('p');
  });
});
