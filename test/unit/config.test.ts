import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig, loadConfig } from '../../src/config/config.ts';

describe('configuration', () => {
  it('defaults to the upstream values of docs/behaviour.md §2.2', () => {
    const c = defaultConfig();
    expect(c.websiteBaseUrl).toBe('crownlabs.polito.it');
    expect(c.containerEnvSidecarsTag).toBe('latest');
    expect(c.containerEnvXVncImg).toBe('crownlabs/tigervnc');
    expect(c.containerEnvWebsockifyImg).toBe('crownlabs/websockify');
    expect(c.containerEnvInstmetricsServerEndpoint).toBe('instmetrics:9090');
    expect(c.containerKanikoImg).toBe('gcr.io/kaniko-project/executor');
    expect(c.mydrivePvcsSize).toBe('1Gi');
    expect(c.mydrivePvcsStorageClassName).toBe('rook-nfs');
    expect(c.mydrivePvcsNamespace).toBe('mydrive-pvcs');
    expect([c.capCpu, c.capMemory, c.capInstances]).toEqual(['25', '50G', 10]);
  });
  it('layers file < environment < flags', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cfg-')), 'c.yaml');
    writeFileSync(file, 'websiteBaseUrl: file.example\ncapInstances: 4\nnamespaceWhitelist: {a: b}\nbaseWorkspaces: [utilities]\n');
    const { config, problems } = loadConfig({
      file,
      env: { CROWNLABS_WEBSITE_BASE_URL: 'env.example', CROWNLABS_CAP_INSTANCES: '6', CROWNLABS_TARGET_LABEL: 'k=v' },
      flags: { websiteBaseUrl: 'flag.example' },
    });
    expect(problems).toEqual([]);
    expect(config.websiteBaseUrl).toBe('flag.example');
    expect(config.capInstances).toBe(6);
    expect(config.namespaceWhitelist).toEqual({ a: 'b' });
    expect(config.baseWorkspaces).toEqual(['utilities']);
    expect(config.targetLabel).toEqual({ key: 'k', value: 'v' });
  });
  it('parses the upstream k1=v1&k2=v2 whitelist and rejects malformed values with their source', () => {
    expect(loadConfig({ flags: { namespaceWhitelist: 'a=b&c.d/e=f' } }).config.namespaceWhitelist).toEqual({ a: 'b', 'c.d/e': 'f' });
    expect(loadConfig({ flags: { namespaceWhitelist: '' } }).config.namespaceWhitelist).toEqual({});
    const bad = loadConfig({ env: { CROWNLABS_NAMESPACE_WHITELIST: 'a=b&oops', CROWNLABS_CAP_MEMORY: 'lots', CROWNLABS_AUTH_MODE: 'none' } });
    expect(bad.problems.map((p) => `${p.file}: ${p.field}: ${p.message}`)).toEqual([
      'environment CROWNLABS_NAMESPACE_WHITELIST: namespaceWhitelist: "oops" is not key=value (items are joined with &)',
      'environment CROWNLABS_AUTH_MODE: authMode: must be one of shared, per-instance',
      'environment CROWNLABS_CAP_MEMORY: capMemory: must be a Kubernetes quantity (e.g. 25, 50G, 1Gi), not "lots"',
    ]);
  });
});
