import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../support/cli.ts';

describe('npm run synth (cdk8s synth, #17.2)', () => {
  it('runs no cdk8s-cli upgrade check (offline it printed a stack trace)', () => {
    // cdk8s-cli keeps the latest version it saw in ~/.cdk8s-cli.version for 30 minutes: a newer
    // one there makes the check print its banner without any network, so the test is offline.
    const home = mkdtempSync(join(tmpdir(), 'cdk8s-home-'));
    writeFileSync(join(home, '.cdk8s-cli.version'), '999.0.0');
    const out = join(mkdtempSync(join(tmpdir(), 'cdk8s-synth-')), 'dist');
    const r = spawnSync('npm', ['run', '--silent', 'synth', '--', '--output', out], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, HOME: home, CI: 'true' } });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('of cdk8s-cli is available');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(out, 'platform.yaml'))).toBe(true);
  });
});
