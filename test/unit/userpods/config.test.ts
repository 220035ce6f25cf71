import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadUserPodsConfig } from '../../../src/userpods/config.ts';
import { checkWhitelist, parseManifest } from '../../../src/userpods/manifest.ts';

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
    const p = file('c.yaml', 'namespace: sciencedata-dev\nwhitelistmanifestregex: ^http://127\\.0\\.0\\.1\ntimeoutCreate: 1h2m3s\nhostnameList:\n  - {hostname: silo7.sciencedata.dk, address: 10.0.0.20}\n');
    const { config, problems } = loadUserPodsConfig({ file: p });
    expect(problems).toEqual([]);
    expect(config.namespace).toBe('sciencedata-dev');
    expect(config.whitelistManifestRegex).toBe('^http://127\\.0\\.0\\.1');
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
    const p = file('bad.yaml', 'defaultRestartPolicy: Sometimes\ntokenByteLimit: -1\nnosuchKey: 1\nwhitelistManifestRegex: "("\n');
    const { problems } = loadUserPodsConfig({ file: p, env: { BACKEND_TIMEOUTDELETE: 'soon', BACKEND_TESTINGHOST: 'not-an-ip' } });
    const text = problems.join('\n');
    expect(text).toContain('defaultRestartPolicy: must be one of');
    expect(text).toContain('tokenByteLimit: must be >= 1');
    expect(text).toContain('unknown config key "nosuchKey"');
    expect(text).toContain('invalid duration "soon"');
    expect(text).toContain('testingHost: "not-an-ip" is not an IP address');
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
  it('an invalid whitelist regex is reported', () => {
    const { problems } = loadUserPodsConfig({ env: { BACKEND_WHITELISTMANIFESTREGEX: '(' } });
    expect(problems.join('\n')).toContain('whitelistManifestRegex: not a valid regular expression');
  });
});

describe('seed 004 manifests', () => {
  it('a yaml_url outside the whitelist is refused', () => {
    expect(() => checkWhitelist('https://evil.example/pod.yaml', 'https:\\/\\/raw[.]githubusercontent[.]com\\/deic-dk\\/pod_manifests')).toThrow(/not matched by the manifest whitelist/);
    expect(() => checkWhitelist('https://raw.githubusercontent.com/deic-dk/pod_manifests/main/jupyter.yaml', 'https:\\/\\/raw[.]githubusercontent[.]com\\/deic-dk\\/pod_manifests')).not.toThrow();
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
