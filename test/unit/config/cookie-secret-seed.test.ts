// #14.9: the seed of the per-instance cookie secrets is a secret. It comes only from the
// environment (in the cluster: the Secret), never from the config file, a flag or the ConfigMap,
// and without it nothing that writes Secret values renders a per-instance Instance.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/config.ts';
import { renderPlatform } from '../../../src/platform/install.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';
import { TEST_SEED } from '../../support/lab.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const SEED_ENV = 'CROWNLABS_COOKIE_SECRET_SEED';

function configFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'seed-')), 'c.yaml');
  writeFileSync(file, text);
  return file;
}

describe('cookieSecretSeed is read from the environment only', () => {
  it('is refused in the config file, naming the file, the key and the variable to use, without echoing the value', () => {
    const file = configFile(`authMode: per-instance\ncookieSecretSeed: ${TEST_SEED}\n`);
    const { config, problems } = loadConfig({ file });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ severity: 'error', file, field: 'cookieSecretSeed' });
    expect(problems[0].message).toContain(SEED_ENV);
    expect(problems[0].message).not.toContain(TEST_SEED);
    expect(config.cookieSecretSeed).toBe('');
  });
  it('is refused as a flag value and has no command-line flag', () => {
    expect(loadConfig({ flags: { cookieSecretSeed: TEST_SEED } }).problems.map((p) => p.field)).toEqual(['cookieSecretSeed']);
    const r = crownlabs(['help', 'config']);
    expect(r.stdout).not.toContain('cookie-secret-seed');
    expect(r.stdout).toContain('--auth-mode');
    expect(r.stdout).toMatch(/cookieSecretSeed\n  environment only/);
  });
  it('is taken from the environment, at least 32 characters', () => {
    expect(loadConfig({ env: { [SEED_ENV]: TEST_SEED } })).toMatchObject({ problems: [], config: { cookieSecretSeed: TEST_SEED } });
    const short = loadConfig({ env: { [SEED_ENV]: 'guessable' } });
    expect(short.problems.map((p) => `${p.file}: ${p.field}: ${p.message}`)).toEqual([
      `environment ${SEED_ENV}: cookieSecretSeed: must be at least 32 characters (e.g. \`openssl rand -hex 32\`), or empty`,
    ]);
  });
});

describe('the platform install never holds the seed', () => {
  it('keeps it out of the ConfigMap and hands it to every controller from the Secret', () => {
    const { config, problems } = loadConfig({ env: { [SEED_ENV]: TEST_SEED, CROWNLABS_AUTH_MODE: 'per-instance' } });
    expect(problems).toEqual([]);
    const objects = renderPlatform(config) as Any[];
    expect(JSON.stringify(objects)).not.toContain(TEST_SEED);
    const cm = parse(objects.find((o) => o.kind === 'ConfigMap').data['config.yaml']);
    expect(cm.authMode).toBe('per-instance');
    expect(Object.keys(cm)).not.toContain('cookieSecretSeed');
    const controllers = objects.filter((o) => o.kind === 'Deployment' && o.metadata.name.startsWith('crownlabs-controller-'));
    expect(controllers.length).toBeGreaterThan(0);
    for (const d of controllers) {
      expect(d.spec.template.spec.containers[0].env).toContainEqual({
        name: SEED_ENV,
        valueFrom: { secretKeyRef: { name: 'crownlabs-composer-secrets', key: 'cookieSecretSeed', optional: true } },
      });
    }
  });
});

describe('the CLI in authMode per-instance', () => {
  it('synth refuses to render without a seed (exit 1, nothing written) and renders with one', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'seed-')), 'dist');
    const env = { [SEED_ENV]: '' };
    const r = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--auth-mode', 'per-instance', '-o', out], undefined, env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`environment ${SEED_ENV}: error: cookieSecretSeed: authMode "per-instance"`);
    expect(() => readFileSync(join(out, 'tenants', 'john.doe.yaml'))).toThrow();
    const ok = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '--auth-mode', 'per-instance', '--stdout'], undefined, { [SEED_ENV]: TEST_SEED });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('cookie-secret:');
  });
  it('gitops needs no seed: the tree holds no Secret value, and is the same bytes with or without one', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'seed-'));
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '--auth-mode', 'per-instance', '-o', join(tmp, 'a')], undefined, { [SEED_ENV]: '' });
    expect(r.code).toBe(0);
    const secrets = readFileSync(join(tmp, 'a', 'SECRETS.md'), 'utf8');
    expect(secrets).toMatch(/\| tenant-john-doe \| green-tea-6831-oauth2-proxy \| client-secret, cookie-secret \|/);
    expect(crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '--auth-mode', 'per-instance', '-o', join(tmp, 'a'), '--check'], undefined, { [SEED_ENV]: TEST_SEED }).code).toBe(0);
  });
  it('the controller does not start without one (usage error, before touching a cluster)', () => {
    const r = crownlabs(['controller', '--auth-mode', 'per-instance', '--kubeconfig', '/nonexistent'], undefined, { [SEED_ENV]: '' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('cookieSecretSeed');
  });
});
