import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, envVarName } from '../../src/config/keys.ts';
import { USER_PODS_KEYS } from '../../src/userpods/config.ts';

const README = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');

describe('README', () => {
  it('documents every configuration key with its flag and environment variable', () => {
    for (const def of CONFIG_KEYS) {
      expect(README, def.key).toContain(`| \`${def.key}\` | ${def.flag ? `\`${def.flag}\`` : '—'} | \`${envVarName(def.key)}\` |`);
    }
  });
  it('documents every key of the user pods API configuration', () => {
    for (const def of USER_PODS_KEYS) expect(README, def.key).toMatch(new RegExp(`^\\| \`${def.key}\` \\|`, 'm'));
  });
  it('gives the two commands and .ci/run calls the test command', () => {
    expect(README).toContain('npm ci && npm run example');
    expect(README).toContain('npm ci && npm test');
    expect(readFileSync(join(import.meta.dirname, '..', '..', '.ci', 'run'), 'utf8')).toMatch(/^npm test$/m);
  });
});
