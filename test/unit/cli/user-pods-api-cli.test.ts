import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { crownlabs } from '../../support/cli.ts';

describe('crownlabs user-pods-api', () => {
  it('is listed with its endpoints and takes --config, --listen, --kubeconfig', () => {
    const r = crownlabs(['user-pods-api', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('create_pod');
    for (const flag of ['--config <file>', '--listen <addr>', '--kubeconfig <file>']) expect(r.stdout).toContain(flag);
  });
  it('refuses a bad configuration with every problem (usage error, exit 2) before touching a cluster', () => {
    const dir = mkdtempSync(join(tmpdir(), 'userpods-cli-'));
    const file = join(dir, 'config.yaml');
    writeFileSync(file, 'timeoutCreate: soon\n');
    const r = crownlabs(['user-pods-api', '--config', file], undefined, { BACKEND_TOKENBYTELIMIT: 'lots' });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid duration "soon"');
    expect(r.stderr).toContain('environment BACKEND_TOKENBYTELIMIT: tokenByteLimit: must be integer');
  });
});
