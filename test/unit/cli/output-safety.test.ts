import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANIFESTS_HEADER } from '../../../src/cli/manifests.ts';
import { OUTPUT_MARKER } from '../../../src/output-marker.ts';
import { listFiles } from '../../../src/sinks/atomic-tree.ts';
import { BIN, CONFIG, crownlabs, LAB, ROOT } from '../../support/cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
/** Every file below `dir` (dot files and .git included) with its content. */
const snapshot = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

/** A repository-like folder: .git, a README, the lab and its config. */
function repo(): string {
  const dir = tmp('repo-');
  mkdirSync(join(dir, '.git'));
  writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(dir, 'README.md'), '# my lab\n');
  cpSync(LAB, join(dir, 'lab'), { recursive: true });
  cpSync(CONFIG, join(dir, 'crownlabs.config.yaml'));
  return dir;
}

describe('synth and gitops write only into a folder of their own (#14.1)', () => {
  it('synth -o . in a repository is refused: exit 1, nothing removed', () => {
    const dir = repo();
    const before = snapshot(dir);
    const r = crownlabs(['synth', '-f', 'lab', '--config', 'crownlabs.config.yaml', '-o', '.'], dir);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^\.: error: contains the input lab/m);
    expect(r.stderr).not.toMatch(/removed|\n\s+at /);
    expect(snapshot(dir)).toEqual(before);
    expect(readdirSync(join(dir, '..')).filter((n) => n.startsWith(`.${dir.split('/').pop()}.`))).toEqual([]);
  });

  it('a folder that is not empty and not marked is refused, even when no input overlaps', () => {
    const dir = repo();
    const before = snapshot(dir);
    const r = crownlabs(['gitops', '-f', join(dir, 'lab'), '--config', CONFIG, '-o', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error: contains the input/);
    const other = tmp('other-');
    writeFileSync(join(other, 'notes.txt'), 'mine\n');
    const o = crownlabs(['gitops', '-f', join(dir, 'lab'), '--config', CONFIG, '-o', other]);
    expect(o.code).toBe(1);
    expect(o.stderr).toMatch(/holds files crownlabs did not write \(notes\.txt\) and no \.crownlabs-output marker/);
    expect(readdirSync(other)).toEqual(['notes.txt']);
    expect(snapshot(dir)).toEqual(before);
  });

  it('gitops -f lab -o lab (or inside it) is refused and leaves the inputs as they were', () => {
    const dir = repo();
    const before = snapshot(dir);
    for (const out of ['lab', 'lab/gitops', 'crownlabs.config.yaml']) {
      const r = crownlabs(['gitops', '-f', 'lab', '--config', 'crownlabs.config.yaml', '-o', out], dir);
      expect(r.code, out).toBe(1);
      expect(r.stderr, out).toMatch(new RegExp(`^${out}: error: (is the input|is inside the input|is not a folder)`, 'm'));
    }
    expect(snapshot(dir)).toEqual(before);
  });

  it('a marked output folder inside an input folder is never read back; -o inside the input is refused', () => {
    const dir = repo();
    rmSync(join(dir, 'crownlabs.config.yaml')); // `-f .` would read it as input
    expect(crownlabs(['synth', '-f', 'lab', '--config', CONFIG, '-o', 'dist'], dir).code).toBe(0);
    expect(existsSync(join(dir, 'dist', OUTPUT_MARKER))).toBe(true);
    const elsewhere = join(tmp('elsewhere-'), 'dist');
    const r = crownlabs(['synth', '-f', '.', '--config', CONFIG, '-o', elsewhere], dir);
    expect(r.stderr).not.toMatch(/error/);
    expect(r.stderr).toMatch(/^12 resource sets/m);
    expect(r.code).toBe(0);
    const again = crownlabs(['synth', '-f', '.', '--config', CONFIG, '-o', 'dist'], dir);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^dist: error: is inside the input \./m);
  });
});

describe('outputs that cannot be written give a clear error and exit 1 (#14.11, #14.13, #14.16)', () => {
  it('a symbolic link as -o is refused and kept (synth, gitops, manifests)', () => {
    const dir = tmp('link-');
    mkdirSync(join(dir, 'real'));
    writeFileSync(join(dir, 'real', 'keep.txt'), 'k\n');
    symlinkSync(join(dir, 'real'), join(dir, 'dist'));
    for (const cmd of ['synth', 'gitops']) {
      const r = crownlabs([cmd, '-f', LAB, '--config', CONFIG, '-o', join(dir, 'dist')]);
      expect(r.code, cmd).toBe(1);
      expect(r.stderr, cmd).toMatch(/dist: error: is a symbolic link to .*real: .*refuses links/);
    }
    writeFileSync(join(dir, 'platform.yaml'), MANIFESTS_HEADER);
    symlinkSync(join(dir, 'platform.yaml'), join(dir, 'link.yaml'));
    expect(crownlabs(['manifests', '--config', CONFIG, '-o', join(dir, 'link.yaml')]).stderr).toMatch(/link\.yaml: error: is a symbolic link/);
    expect(readdirSync(dir).sort()).toEqual(['dist', 'link.yaml', 'platform.yaml', 'real']);
    expect(readdirSync(join(dir, 'real'))).toEqual(['keep.txt']);
    expect(readFileSync(join(dir, 'platform.yaml'), 'utf8')).toBe(MANIFESTS_HEADER);
  });

  it('-o FILE for synth, -o FOLDER for manifests, and -o /proc/self/x end with exit 1, not 70 or a hang', () => {
    const dir = tmp('file-');
    writeFileSync(join(dir, 'out'), 'keep\n');
    const file = crownlabs(['synth', '-f', LAB, '--config', CONFIG, '-o', join(dir, 'out')]);
    expect([file.code, file.stderr]).toEqual([1, `${join(dir, 'out')}: error: is not a folder (-o takes the folder to write)\n`]);
    const folder = crownlabs(['manifests', '--config', CONFIG, '-o', dir]);
    expect([folder.code, folder.stderr]).toEqual([1, `${dir}: error: is a folder (-o takes the file to write)\n`]);
    // Before: Node's recursive mkdir spun at 100% CPU here; the timeout only keeps a regression from hanging the suite.
    const proc = spawnSync(process.execPath, [BIN, 'synth', '-f', LAB, '--config', CONFIG, '-o', '/proc/self/x'], { encoding: 'utf8', env: { ...process.env, CI: 'true' }, timeout: 55_000 });
    expect(proc.status).toBe(1);
    expect(proc.stderr).toMatch(/^\/proc\/self\/x: error: cannot be written: /m);
    expect(proc.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(readFileSync(join(dir, 'out'), 'utf8')).toBe('keep\n');
  });

  it('manifests -o writes a header line, replaces its own file, and refuses any other file or the config', () => {
    const dir = tmp('manifests-');
    writeFileSync(join(dir, 'README.md'), '# mine\n');
    const r = crownlabs(['manifests', '--config', CONFIG, '-o', join(dir, 'README.md')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/README\.md: error: exists and was not written by crownlabs/);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# mine\n');
    cpSync(CONFIG, join(dir, 'c.yaml'));
    const c = crownlabs(['manifests', '--config', join(dir, 'c.yaml'), '-o', join(dir, 'c.yaml')]);
    expect(c.stderr).toMatch(/c\.yaml: error: is the input/);
    expect(readFileSync(join(dir, 'c.yaml'), 'utf8')).toBe(readFileSync(CONFIG, 'utf8'));
    expect(readdirSync(dir).sort()).toEqual(['README.md', 'c.yaml']);
  });

  it('a reader that stops early (| head) ends synth --stdout and manifests quietly, exit 0', () => {
    for (const args of [`synth -f ${LAB} --config ${CONFIG} --stdout`, `manifests --config ${CONFIG}`]) {
      const r = spawnSync('bash', ['-c', `"${process.execPath}" "${BIN}" ${args} 2>err.txt | head -1 >/dev/null; echo "\${PIPESTATUS[0]}"; cat err.txt`], {
        cwd: tmp('epipe-'),
        encoding: 'utf8',
        env: { ...process.env, CI: 'true' },
      });
      expect(r.stdout, args).toBe('0\n');
    }
  });
});

describe('gitops --check and the marker', () => {
  it('the committed gitops/ tree carries the marker and is up to date', () => {
    const r = crownlabs(['gitops', '-f', 'examples/lab', '--config', 'examples/crownlabs.config.yaml', '-o', 'gitops', '--check'], ROOT);
    expect(r.stderr).toMatch(/gitops is up to date/);
    expect(r.code).toBe(0);
  });

  it('a tree without the marker is stale, and the hint says why gitops will not replace it', () => {
    const out = join(tmp('check-'), 'gitops');
    cpSync(join(ROOT, 'gitops'), out, { recursive: true });
    rmSync(join(out, OUTPUT_MARKER));
    const r = crownlabs(['gitops', '-f', LAB, '--config', CONFIG, '-o', out, '--check']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/1 file\(s\) differ .*\n {2}A \.crownlabs-output\n/);
    expect(r.stderr).toMatch(/it has no \.crownlabs-output marker, so crownlabs will not replace it; then run: crownlabs gitops /);
  });
});

describe('gitops --watch', () => {
  function watch(args: string[]) {
    const child = spawn(process.execPath, [BIN, 'gitops', ...args, '--watch', '--debounce', '50'], { env: { ...process.env, CI: 'true' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timeout waiting for ${re}; stderr:\n${stderr}`)), 45_000);
        const check = () => {
          if (re.test(stderr)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stderr.on('data', check);
        void exited.then(() => setTimeout(() => reject(new Error(`exited; stderr:\n${stderr}`)), 100));
        check();
      });
    return { child, waitFor, exited, stderr: () => stderr };
  }

  it('refuses an output inside its inputs before watching', async () => {
    const dir = repo();
    const w = watch(['-f', join(dir, 'lab'), '--config', CONFIG, '-o', join(dir, 'lab', 'gitops')]);
    const guard = setTimeout(() => w.child.kill('SIGTERM'), 45_000); // a watch that starts is stopped
    expect(await w.exited).toBe(1);
    clearTimeout(guard);
    expect(w.stderr()).toMatch(/gitops: error: is inside the input/);
    expect(existsSync(join(dir, 'lab', 'gitops'))).toBe(false);
  });

  it('an input that no longer parses (alias typo) is reported and the last good tree stays (#14.2)', async () => {
    const dir = tmp('watch-typo-');
    const lab = join(dir, 'lab');
    cpSync(LAB, lab, { recursive: true });
    // A tenant in a file of its own, with no instance: removing the file would be valid input.
    const extra = join(lab, 'tenant-ann.yaml');
    const text = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata:
  name: ann.lee
  labels: {crownlabs.polito.it/operator-selector: production}
spec:
  firstName: &first Ann
  lastName: Lee
  email: ann.lee@crownlabs.example.com
  workspaces: [{name: tea, role: user}]
  publicKeys: []
`;
    writeFileSync(extra, text.replace('lastName: Lee', 'lastName: *first'));
    const out = join(dir, 'gitops');
    const w = watch(['-f', lab, '--config', CONFIG, '-o', out]);
    try {
      await w.waitFor(/watching/);
      const good = snapshot(out);
      expect([...good.keys()].some((f) => f.startsWith('tenants/ann.lee/'))).toBe(true);
      writeFileSync(extra, text.replace('lastName: Lee', 'lastName: *frist'));
      await w.waitFor(/the last good tree stays/);
      expect(w.stderr()).toMatch(/tenant-ann\.yaml.*error: .*frist/);
      expect(snapshot(out)).toEqual(good);
      // Fixed again: the watch goes on from the good tree.
      writeFileSync(extra, text.replace('lastName: Lee', 'lastName: Lea'));
      await w.waitFor(/watch: 1 set\(s\) re-rendered/);
    } finally {
      w.child.kill('SIGTERM');
    }
  });

  it('does not read an output folder written into a watched folder, nor its staging folders', async () => {
    const dir = tmp('watch-out-');
    cpSync(LAB, join(dir, 'lab'), { recursive: true });
    const out = join(tmp('watch-gitops-'), 'gitops');
    const w = watch(['-f', dir, '--config', CONFIG, '-o', out]);
    try {
      await w.waitFor(/watching/);
      expect(crownlabs(['synth', '-f', join(dir, 'lab'), '--config', CONFIG, '-o', join(dir, 'dist')]).code).toBe(0);
      const instances = join(dir, 'lab', 'instances.yaml');
      writeFileSync(instances, readFileSync(instances, 'utf8').replace('  running: false\n', '  running: true\n'));
      await w.waitFor(/watch: 1 set\(s\) re-rendered/);
      expect(w.stderr()).not.toMatch(/error|invalid/);
    } finally {
      w.child.kill('SIGTERM');
    }
  });
});
