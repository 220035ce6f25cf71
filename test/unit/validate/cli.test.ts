import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';
import { lab } from '../../support/lab.ts';

function errorLines(stderr: string): string[] {
  return stderr.split('\n').filter((l) => / error: /.test(l));
}

describe('crownlabs validate', () => {
  it('a lab whose rendered objects are all valid: exit 0, one summary line, nothing written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'validate-ok-'));
    const input = join(dir, 'lab.yaml');
    writeFileSync(input, lab({ env: [{ environmentType: 'Container', guiEnabled: true, persistent: true, resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G', disk: '5Gi' } }] }));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'mydriveNfsServerName: nfs.example\nmydriveNfsPathTemplate: /export/{pvc}\n');
    const cwd = mkdtempSync(join(tmpdir(), 'validate-cwd-'));
    const r = crownlabs(['validate', '-f', input, '--config', config], cwd);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ objects in 4 resource sets valid at API level 2e8aeb9\n$/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('the example lab renders only valid objects', () => {
    const r = crownlabs(['validate', '-f', LAB, '--config', CONFIG]);
    expect(errorLines(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ objects in 12 resource sets valid at API level 2e8aeb9\n$/);
  });

  it('the e62be9e twin of the example lab renders only valid objects at that level, and is refused at 2e8aeb9', () => {
    const twin = join(ROOT, 'examples', 'lab-e62be9e');
    const r = crownlabs(['validate', '-f', twin, '--config', CONFIG, '--api-level', 'e62be9e']);
    expect(errorLines(r.stderr)).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\d+ objects in 12 resource sets valid at API level e62be9e\n$/);
    expect(crownlabs(['validate', '-f', twin, '--config', CONFIG]).code).toBe(1);
  });

  it('bad input: the same problems as synth, exit 1', () => {
    const bad = join(ROOT, 'test', 'fixtures', 'bad');
    const v = crownlabs(['validate', '-f', bad]);
    expect(v.code).toBe(1);
    const s = crownlabs(['synth', '-f', bad, '--stdout']);
    expect(errorLines(v.stderr)).toEqual(errorLines(s.stderr));
    expect(errorLines(v.stderr).length).toBeGreaterThan(5);
    expect(v.stderr).toMatch(/\(document 1, Template workspace-tea\/bad-template\): error: spec\.environmentList\[0\]\.environmentType: must be one of/);
    expect(v.stdout).toBe('');
  });

  // A 45-character Instance name passes the input checks, but with these environment names its
  // per-environment Services and containers cannot exist.
  it('schema problems of rendered objects: the same lines on a second thread (-j 2, the default) as on one (-j 1)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'validate-long-'));
    const input = join(dir, 'lab.yaml');
    const long = `inst-${'x'.repeat(40)}`;
    const env0 = 'env0-with-a-long-name';
    writeFileSync(input, lab({ env: [{ name: env0, environmentType: 'Container' }, { name: 'vm-with-a-long-name', environmentType: 'VirtualMachine' }], instanceMeta: { name: long } }));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'mydriveNfsServerName: nfs.example\n');
    const threaded = crownlabs(['validate', '-f', input, '--config', config]);
    const single = crownlabs(['validate', '-f', input, '--config', config, '-j', '1']);
    expect(threaded.code).toBe(1);
    expect(single.code).toBe(1);
    expect(errorLines(threaded.stderr).length).toBeGreaterThan(3);
    expect(threaded.stderr).toContain(`Service tenant-john-doe/${long}-${env0}): error: metadata.name: invalid name`);
    expect(threaded.stderr).toBe(single.stderr);
    expect(crownlabs(['validate', '-f', input, '--config', config, '-j', 'two']).code).toBe(2);
  });

  it('a missing input and a bad config value are input errors (exit 1)', () => {
    expect(crownlabs(['validate', '-f', 'no/such/folder']).code).toBe(1);
    const r = crownlabs(['validate', '-f', LAB, '--target-label', 'no-equals-sign']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/flag --target-label: error: targetLabel/);
  });

  it('usage errors exit 2; --help exits 0 and shows --config (the key flags: crownlabs help config)', () => {
    expect(crownlabs(['validate']).code).toBe(2);
    expect(crownlabs(['validate', '-f', LAB, '--auth-mode', 'bogus']).code).toBe(2);
    const help = crownlabs(['validate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--config <file>');
    expect(help.stdout).toContain('crownlabs help config');
  });
});
