// #14.15: every configuration value is checked when it is loaded, with an error naming the key
// and where the value came from (file, environment variable, flag).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseValue } from '../../../src/config/config.ts';
import { CONFIG_KEYS, envVarName, type ConfigKeyDef } from '../../../src/config/keys.ts';
import { CONFIG } from '../../support/cli.ts';

const defs = CONFIG_KEYS as readonly ConfigKeyDef[];
const def = (key: string) => defs.find((d) => d.key === key)!;

/** Values the API server or the image tools would refuse once rendered, by key. */
const BAD: Record<string, unknown[]> = {
  websiteBaseUrl: ['http://x/y', 'crownlabs.polito.it/path', 'Labs.Example.org', 'host:8080', '', `${'a'.repeat(64)}.example.org`, '10.0.0.1'],
  instancesAuthUrl: ['auth.example.org/oauth2', 'ftp://auth.example.org', 'https://'],
  containerEnvSidecarsTag: ['v1 beta', '-latest', 'a:b'],
  containerEnvXVncImg: ['crownlabs/tigervnc:1.0', 'Crownlabs/TigerVNC', ''],
  containerEnvInstmetricsServerEndpoint: ['http://instmetrics:9090', 'instmetrics:99999'],
  vmRegistry: ['https://registry.example', 'registry example'],
  vmRegistrySecret: ['Registry_Secret'],
  containerKanikoImg: ['gcr.io/kaniko-project/executor:v1 2', 'UPPER/case'],
  oauth2ProxyImage: ['', 'quay.io/oauth2-proxy/oauth2-proxy:'],
  oidcIssuerUrl: ['', 'auth.crownlabs.polito.it/realms/crownlabs'],
  oidcClientId: ['', 'two words'],
  mydrivePvcsSize: ['0', '-1Gi', 'lots'],
  mydrivePvcsStorageClassName: ['Rook_NFS'],
  mydrivePvcsNamespace: ['MyDrive', 'my.drive', ''],
  mydriveNfsServerName: ['nfs://server', 'nfs server'],
  mydriveNfsPathTemplate: ['export/{tenant}', '/export/{user}', '/export/{tenant', '/export/tenant}', '/export/{}'],
  sandboxClusterRole: ['', 'a/b'],
  baseWorkspaces: [['Utilities'], 'ok,not ok'],
  capCpu: ['-5', 'many'],
  capMemory: ['-1G'],
  capInstances: [-1, '2147483648', '1.5'],
  keycloakUrl: ['keycloak.example.org'],
  gitopsRepoUrl: ['git.example.com/lab.git', 'two words'],
  gitopsRevision: ['', 'two words'],
  gitopsPath: ['/abs', '../outside', ''],
  argocdNamespace: ['Argo', 'argo.cd'],
  argocdProject: ['Crown Labs'],
  gitopsMaxObjectsPerApp: ['0'],
  gitopsSecretStore: ['Store!'],
  platformNamespace: ['', 'Crownlabs'],
  platformImage: ['ghcr.io/crownlabs/Composer:0.1.0'],
  platformShards: [['Prod'], ['a'.repeat(43)]],
  platformControllerReplicas: ['-1'],
  platformControllerCpu: ['0', '-200m'],
  platformWebhookCertificate: ['cert-only', 'ns/name/extra'],
  platformWebhookCaBundle: ['not base64!'],
  platformBastionSshdImage: ['crownlabs/ssh-bastion:latest:again'],
  platformImageListRegistryUrl: ['registry.example'],
  platformImageListName: ['Image List'],
  platformImageListAdvertisedRegistryName: ['https://registry.internal'],
  platformImageListUpdateInterval: ['0'],
};

describe('configuration values are checked when loaded', () => {
  it('every default passes, and so does the example configuration', () => {
    for (const d of defs) expect(parseValue(d, d.default).error, d.key).toBeUndefined();
    expect(loadConfig({ file: CONFIG }).problems).toEqual([]);
  });

  it('good values pass: hostnames, URLs, images with registry ports and digests, quantities, paths', () => {
    const good: Record<string, unknown> = {
      websiteBaseUrl: 'labs.example.org',
      instancesAuthUrl: 'https://auth.example.org/oauth2',
      containerEnvXVncImg: 'registry.example:5000/crownlabs/tigervnc',
      oauth2ProxyImage: 'quay.io/oauth2-proxy/oauth2-proxy:v7.6.0@sha256:' + 'a'.repeat(64),
      vmRegistry: 'registry.example:5000/crownlabs',
      containerEnvInstmetricsServerEndpoint: '10.0.0.1:9090',
      mydriveNfsServerName: '10.0.0.2',
      capCpu: '0',
      gitopsRepoUrl: 'git@github.com:crownlabs/lab.git',
      platformWebhookCertificate: 'cert-manager/crownlabs-webhook',
      platformWebhookCaBundle: Buffer.from('-----BEGIN CERTIFICATE-----').toString('base64'),
      platformShards: 'prod,exam-1',
      baseWorkspaces: 'utilities,common',
    };
    for (const [key, value] of Object.entries(good)) expect(parseValue(def(key), value).error, key).toBeUndefined();
  });

  it('bad values are refused, one error per value, each naming the key and its source', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'c.yaml');
    for (const [key, values] of Object.entries(BAD)) {
      for (const value of values) {
        expect(parseValue(def(key), value).error, `${key}=${JSON.stringify(value)}`).toBeDefined();
        writeFileSync(file, `${key}: ${JSON.stringify(value)}\n`);
        const fromFile = loadConfig({ file }).problems;
        expect(fromFile.map((p) => [p.file, p.field]), `${key} in a file`).toEqual([[file, key]]);
      }
      const value = values[0];
      const text = Array.isArray(value) ? value.join(',') : String(value);
      const fromEnv = loadConfig({ env: { [envVarName(key)]: text } }).problems;
      expect(fromEnv.map((p) => [p.file, p.field]), `${key} in the environment`).toEqual([[`environment ${envVarName(key)}`, key]]);
      const fromFlag = loadConfig({ flags: { [key]: text } }).problems;
      expect(fromFlag.map((p) => [p.file, p.field]), `${key} as a flag`).toEqual([[`flag ${def(key).flag}`, key]]);
    }
  });

  it('the messages say what is expected and show the value', () => {
    const msg = (key: string, value: string) => loadConfig({ flags: { [key]: value } }).problems.map((p) => `${p.file}: ${p.field}: ${p.message}`);
    expect(msg('websiteBaseUrl', 'http://x/y')[0]).toMatch(/^flag --website-base-url: websiteBaseUrl: must be a bare DNS name: .*, not "http:\/\/x\/y"$/);
    expect(msg('capCpu', '-5')).toEqual(['flag --cap-cpu: capCpu: must not be negative, not "-5"']);
    expect(msg('capInstances', '99999999999')).toEqual(['flag --cap-instances: capInstances: must be a non-negative integer (at most 2147483647), not "99999999999"']);
    expect(msg('baseWorkspaces', 'ok,Not-OK')[0]).toContain('has "Not-OK"');
    expect(msg('mydriveNfsPathTemplate', '/export/{user}/{pvc}')).toEqual([
      'flag --mydrive-nfs-path-template: mydriveNfsPathTemplate: has the unknown placeholder "{user}" in "/export/{user}/{pvc}": the known placeholders are {tenant} (the canonical tenant name) and {pvc} (the tenant\'s MyDrive PVC name)',
    ]);
    expect(msg('mydriveNfsPathTemplate', '/export/{tenant}/{pvc}')).toEqual([]);
  });
});
