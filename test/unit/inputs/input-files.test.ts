import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expandInputPaths, readInputs } from '../../../src/inputs/parse.ts';
import { defaultConfig, loadConfig } from '../../../src/config/config.ts';
import { BIN, ROOT } from '../../support/cli.ts';

const NAMESPACE = (name: string) => `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${name}}\n`;

/**
 * Runs `crownlabs validate` as a child with a kill timer, so that a reader that blocks (a FIFO) or
 * reads forever (/dev/zero) fails the test instead of hanging it. The timer is a guard, not a
 * measure of speed.
 */
function validate(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, 'validate', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', ...env },
    timeout: 45_000,
    killSignal: 'SIGKILL',
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, lines: r.stderr.split('\n').filter(Boolean) };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crownlabs-inputs-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('#14.11 only regular files are read', () => {
  it('skips a FIFO and a link to /dev/zero inside a folder with one warning each, and reads the rest', { timeout: 120_000 }, () => {
    writeFileSync(join(dir, 'ok.yaml'), NAMESPACE('ok'));
    execFileSync('mkfifo', [join(dir, 'fifo.yaml')]);
    symlinkSync('/dev/zero', join(dir, 'zero.yaml'));
    const r = validate(['-f', dir]);
    expect(r.signal).toBeNull();
    expect(r.lines).toEqual([
      `${join(dir, 'fifo.yaml')}: warning: not a regular file (FIFO): skipped`,
      `${join(dir, 'zero.yaml')}: warning: not a regular file (character device): skipped`,
    ]);
    expect(r.code).toBe(0);
  });

  it('rejects a FIFO or a device named with -f (exit 1), without opening it for long', { timeout: 120_000 }, () => {
    execFileSync('mkfifo', [join(dir, 'fifo.yaml')]);
    const r = validate(['-f', join(dir, 'fifo.yaml'), '/dev/zero']);
    expect(r.signal).toBeNull();
    expect(r.lines).toEqual([
      `${join(dir, 'fifo.yaml')}: error: not a regular file (FIFO): not read`,
      '/dev/zero: error: not a regular file (character device): not read',
      '2 errors',
    ]);
    expect(r.code).toBe(1);
  });

  it('detects a symbolic link loop with one warning and reads each file once', () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'ns.yaml'), NAMESPACE('ns'));
    symlinkSync('..', join(dir, 'sub', 'up'));
    symlinkSync('self', join(dir, 'self'));
    const { objects, problems } = readInputs([dir]);
    expect(problems.map((p) => `${p.file}: ${p.severity}: ${p.message}`)).toEqual([
      `${join(dir, 'self')}: warning: symbolic link loop: skipped`,
      `${join(dir, 'sub', 'up')}: warning: symbolic link loop (this folder is inside itself): skipped`,
    ]);
    expect(objects.map((o) => o.object.metadata.name)).toEqual(['ns']);
  });

  it('reads a file reached through two paths once', () => {
    writeFileSync(join(dir, 'ns.yaml'), NAMESPACE('ns'));
    symlinkSync('ns.yaml', join(dir, 'alias.yaml'));
    const { objects, problems } = readInputs([dir, join(dir, 'ns.yaml')]);
    expect(problems).toEqual([]);
    expect(objects).toHaveLength(1);
  });

  it('a dangling link with a YAML name is an error; other unreadable entries are skipped with a warning', () => {
    symlinkSync('nowhere', join(dir, 'gone.yaml'));
    symlinkSync('nowhere', join(dir, 'notes'));
    const { problems } = readInputs([dir]);
    expect(problems.map((p) => `${p.severity}: ${p.message}`)).toEqual([
      'error: broken symbolic link (its target does not exist)',
      'warning: broken symbolic link (its target does not exist): skipped',
    ]);
  });
});

describe('pseudo file systems and huge trees are not walked', () => {
  it('-f /proc and -f /sys are errors at once (they link back to / and hold endless files); the CLI exits 1', { timeout: 120_000 }, () => {
    const { files, problems } = expandInputPaths(['/proc', '/sys']);
    expect(files).toEqual([]);
    expect(problems.map((p) => `${p.file}: ${p.severity}: ${p.message}`)).toEqual([
      '/proc: error: is on the proc file system, which holds no input (it can be endless): not read',
      '/sys: error: is on the sysfs file system, which holds no input (it can be endless): not read',
    ]);
    const r = validate(['-f', '/proc']);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(1);
    expect(r.lines).toEqual(['/proc: error: is on the proc file system, which holds no input (it can be endless): not read', '1 error']);
  });

  it('a link to /proc inside a lab folder is skipped with a warning, and the rest is read', () => {
    writeFileSync(join(dir, 'ns.yaml'), NAMESPACE('ns'));
    symlinkSync('/proc', join(dir, 'proc'));
    const { objects, problems } = readInputs([dir]);
    expect(problems.map((p) => `${p.file}: ${p.severity}: ${p.message}`)).toEqual([`${join(dir, 'proc')}: warning: is on the proc file system, which holds no input (it can be endless): skipped`]);
    expect(objects.map((o) => o.object.metadata.name)).toEqual(['ns']);
  });

  it('the walk stops with one error past the entry limit, naming the folder it stopped in', () => {
    for (const sub of ['a', 'b']) {
      mkdirSync(join(dir, sub));
      for (let i = 0; i < 3; i++) writeFileSync(join(dir, sub, `${i}.yaml`), NAMESPACE(`${sub}${i}`));
    }
    expect(expandInputPaths([dir], 8).problems).toEqual([]);
    const { files, problems } = expandInputPaths([dir], 5);
    expect(problems.map((p) => `${p.file}: ${p.severity}: ${p.message}`)).toEqual([`${join(dir, 'b')}: error: the input folders hold more than 5 entries: stopped reading here (is -f the lab's folder?)`]);
    expect(files).toHaveLength(3);
  });
});

describe('#14.11 inputMaxFileSize caps the bytes of one input file', () => {
  it('defaults to 16 MiB and takes byte suffixes', () => {
    expect(defaultConfig().inputMaxFileSize).toBe(16 * 2 ** 20);
    expect(loadConfig({ flags: { inputMaxFileSize: '512Ki' } }).config.inputMaxFileSize).toBe(512 * 1024);
    expect(loadConfig({ env: { CROWNLABS_INPUT_MAX_FILE_SIZE: '2M' } }).config.inputMaxFileSize).toBe(2_000_000);
    for (const bad of ['0', '2Gi', '1.5Mi', '100m', '-1', 'lots']) {
      expect(loadConfig({ flags: { inputMaxFileSize: bad } }).problems, bad).toHaveLength(1);
    }
  });

  it('rejects a larger file with an error naming it, and reads one at the cap', () => {
    const text = NAMESPACE('big') + `# ${'x'.repeat(2000)}\n`;
    writeFileSync(join(dir, 'big.yaml'), text);
    const over = readInputs([dir], { cwd: dir, maxFileBytes: text.length - 1 });
    expect(over.problems.map((p) => `${p.file}: ${p.message}`)).toEqual([`big.yaml: has ${text.length} bytes, more than inputMaxFileSize (${text.length - 1} bytes): not read`]);
    expect(over.objects).toEqual([]);
    expect(readInputs([dir], { maxFileBytes: text.length }).objects).toHaveLength(1);
  });

  it('the CLI takes the cap from the flag and the environment', { timeout: 120_000 }, () => {
    writeFileSync(join(dir, 'big.yaml'), NAMESPACE('big') + `# ${'x'.repeat(2000)}\n`);
    expect(validate(['-f', dir, '--input-max-file-size', '1Ki']).code).toBe(1);
    expect(validate(['-f', dir], { CROWNLABS_INPUT_MAX_FILE_SIZE: '1Ki' }).code).toBe(1);
    expect(validate(['-f', dir]).code).toBe(0);
  });
});

describe('#14.11 the --config file is read with the same care', () => {
  it('refuses a FIFO given as --config (exit 1) instead of waiting for a writer', { timeout: 120_000 }, () => {
    writeFileSync(join(dir, 'ns.yaml'), NAMESPACE('ns'));
    execFileSync('mkfifo', [join(dir, 'config.yaml')]);
    const r = validate(['-f', join(dir, 'ns.yaml'), '--config', join(dir, 'config.yaml')]);
    expect(r.signal).toBeNull();
    expect(r.lines).toEqual([`${join(dir, 'config.yaml')}: error: cannot read config: not a regular file (FIFO): not read`, '1 error']);
    expect(r.code).toBe(1);
  });

  it('refuses a config file over 1 MiB', () => {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, `capCpu: "4"\n# ${'x'.repeat(2 ** 20)}\n`);
    expect(loadConfig({ file }).problems.map((p) => p.message)).toEqual([`cannot read config: has ${2 ** 20 + 15} bytes, more than the config file limit (${2 ** 20} bytes): not read`]);
  });
});
