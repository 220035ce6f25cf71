import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lab } from '../../support/lab.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const BIN = join(ROOT, 'bin', 'crownlabs.js');
const LAB = join(ROOT, 'examples', 'lab');
const CONFIG = join(ROOT, 'examples', 'crownlabs.config.yaml');

/** See test/unit/validate/labs.test.ts: remove an entry once its construct is fixed. */
const KNOWN_RENDERING_BUGS = [
  /\(VirtualMachine [^)]*\): error: spec\.template\.spec\.domain: no memory requested/,
  /\(VirtualMachine [^)]*\): error: spec\.template\.spec\.readinessProbe\.tcpSocket\.port: required value is missing/,
];

function crownlabs(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

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
    expect(r.stdout).toMatch(/^\d+ objects in 4 resource sets valid\n$/);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('the example lab: every problem names the set, object, field and input (only the known construct bugs remain)', () => {
    const r = crownlabs(['validate', '-f', LAB, '--config', CONFIG]);
    const errors = errorLines(r.stderr);
    expect(errors.filter((l) => !KNOWN_RENDERING_BUGS.some((re) => re.test(l)))).toEqual([]);
    for (const re of KNOWN_RENDERING_BUGS) expect(errors.some((l) => re.test(l)), `known bug ${re} no longer occurs: remove it`).toBe(true);
    if (KNOWN_RENDERING_BUGS.length > 0) {
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'instances/tenant-john-doe/black-tea-0042 (VirtualMachine tenant-john-doe/black-tea-0042): error: spec.template.spec.readinessProbe.tcpSocket.port: ' +
          'required value is missing (rendered for Instance/tenant-john-doe/black-tea-0042 from examples/lab/instances.yaml, document 2)\n',
      );
      expect(r.stdout).toBe('');
    } else {
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^\d+ objects in 12 resource sets valid\n$/);
    }
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

  it('a missing input and a bad config value are input errors (exit 1)', () => {
    expect(crownlabs(['validate', '-f', 'no/such/folder']).code).toBe(1);
    const r = crownlabs(['validate', '-f', LAB, '--target-label', 'no-equals-sign']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/flag --target-label: error: targetLabel/);
  });

  it('usage errors exit 2; --help exits 0 and lists the config flags', () => {
    expect(crownlabs(['validate']).code).toBe(2);
    expect(crownlabs(['validate', '-f', LAB, '--auth-mode', 'bogus']).code).toBe(2);
    const help = crownlabs(['validate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--config <file>');
    expect(help.stdout).toContain('--website-base-url <value>');
  });
});
