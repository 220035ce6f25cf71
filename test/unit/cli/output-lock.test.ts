import { spawn, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { listFiles } from '../../../src/sinks/atomic-tree.ts';
import { BIN, CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const snapshot = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

/** A Tenant of its own: a lab with it renders a tree with more files than the example lab's. */
const ANN = `apiVersion: crownlabs.polito.it/v1alpha2
kind: Tenant
metadata:
  name: ann.lee
  labels: {crownlabs.polito.it/operator-selector: production}
spec:
  firstName: Ann
  lastName: Lee
  email: ann.lee@crownlabs.example.com
  workspaces: [{name: tea, role: user}]
  publicKeys: []
`;

function labCopy(extraTenant = false): string {
  const parent = tmp('lock-lab-');
  // Readable by the unprivileged user of the permission tests.
  chmodSync(parent, 0o755);
  const lab = join(parent, 'lab');
  cpSync(LAB, lab, { recursive: true });
  if (extraTenant) writeFileSync(join(lab, 'tenant-ann.yaml'), ANN);
  return lab;
}

/** The tree a fresh gitops run renders from `lab`. */
function fresh(lab: string): Map<string, string> {
  const out = join(tmp('lock-fresh-'), 'gitops');
  expect(crownlabs(['gitops', '-f', lab, '--config', CONFIG, '-o', out]).code).toBe(0);
  return snapshot(out);
}

/** A process that stays alive as the holder of a lock planted by the test. */
const holders: ReturnType<typeof spawn>[] = [];
afterAll(() => {
  for (const h of holders) h.kill('SIGKILL');
});
function plantLock(out: string, pid: number): string {
  const lock = join(dirname(out), `.${basename(out)}.lock`);
  writeFileSync(lock, `${JSON.stringify({ pid, host: hostname(), command: 'crownlabs gitops --watch', since: '2026-01-01T00:00:00.000Z', token: 'planted' })}\n`);
  return lock;
}

describe('one writer at a time per output folder', () => {
  it('a run finding the folder locked by a live run waits, names the holder, and fails after --lock-timeout without writing', () => {
    const holder = spawn('sleep', ['120']);
    holders.push(holder);
    for (const cmd of ['gitops', 'synth']) {
      const out = join(tmp('lock-held-'), cmd);
      expect(crownlabs([cmd, '-f', LAB, '--config', CONFIG, '-o', out]).code).toBe(0);
      const before = snapshot(out);
      const lock = plantLock(out, holder.pid!);
      const t0 = Date.now();
      const r = crownlabs([cmd, '-f', labCopy(true), '--config', CONFIG, '-o', out, '--lock-timeout', '1']);
      expect(r.code, r.stderr).toBe(1);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
      expect(r.stderr).toContain(`${out}: waiting for another crownlabs run to finish writing it (pid ${holder.pid}, crownlabs gitops --watch, since 2026-01-01T00:00:00.000Z; lock file ${lock}), at most 1 s`);
      expect(r.stderr).toMatch(new RegExp(`${out}: error: is being written by another crownlabs run \\(pid ${holder.pid}.*\\); gave up after 1 s \\(--lock-timeout\\)\\. .*if no such process is running, remove ${lock.replace(/\./g, '\\.')}`));
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(snapshot(out)).toEqual(before);
      expect(existsSync(lock)).toBe(true);
    }
  });

  it('a lock left by a run that is gone (killed) is taken over, and the run leaves no lock behind', () => {
    const dead = spawnSync('true').pid!;
    const out = join(tmp('lock-stale-'), 'gitops');
    const lock = plantLock(out, dead);
    const lab = labCopy(true);
    const r = crownlabs(['gitops', '-f', lab, '--config', CONFIG, '-o', out, '--lock-timeout', '0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('waiting');
    expect(existsSync(lock)).toBe(false);
    expect(snapshot(out)).toEqual(fresh(lab));
  });

  it('two runs into one folder at once: the second waits for the first, and the tree is exactly one run\'s', async () => {
    const a = labCopy();
    const b = labCopy(true);
    const trees = [fresh(a), fresh(b)];
    for (let round = 0; round < 3; round++) {
      const out = join(tmp('lock-race-'), 'gitops');
      const run = (lab: string) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [BIN, 'gitops', '-f', lab, '--config', CONFIG, '-o', out], { env: { ...process.env, CI: 'true' } });
          let stderr = '';
          child.stderr.on('data', (d) => (stderr += d));
          child.on('exit', (code) => resolve({ code, stderr }));
        });
      const results = await Promise.all([run(a), run(b)]);
      for (const r of results) expect(r.code, r.stderr).toBe(0);
      const tree = snapshot(out);
      expect(trees.some((t) => JSON.stringify([...t]) === JSON.stringify([...tree])), `round ${round}`).toBe(true);
      expect(readdirSync(dirname(out))).toEqual(['gitops']);
    }
  });

  it('a watch session that another run wrote over writes its whole tree on its next update, not a patch over the other tree', async () => {
    const lab = labCopy();
    const out = join(tmp('lock-watch-'), 'gitops');
    const child = spawn(process.execPath, [BIN, 'gitops', '-f', lab, '--config', CONFIG, '-o', out, '--watch', '--debounce', '50'], { env: { ...process.env, CI: 'true' } });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timeout waiting for ${re}; stderr:\n${stderr}`)), 45_000);
        const check = () => {
          if (re.test(stderr)) {
            clearTimeout(timer);
            child.stderr.off('data', check);
            resolve();
          }
        };
        child.stderr.on('data', check);
        check();
      });
    try {
      await waitFor(/watching/);
      // Another run (a CI job, say) writes the folder from another lab.
      const other = crownlabs(['gitops', '-f', labCopy(true), '--config', CONFIG, '-o', out]);
      expect(other.code, other.stderr).toBe(0);
      expect([...listFiles(out)].some((f) => f.startsWith('tenants/ann.lee/'))).toBe(true);
      const instances = join(lab, 'instances.yaml');
      writeFileSync(instances, readFileSync(instances, 'utf8').replace('  running: false\n', '  running: true\n'));
      await waitFor(/watch: \d+ set\(s\) re-rendered/);
      expect(snapshot(out)).toEqual(fresh(lab));
    } finally {
      child.kill('SIGTERM');
    }
  });
});

/** Runs the CLI as an unprivileged user when the tests run as root (root ignores permissions). */
const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
function asUser(args: string[], env: NodeJS.ProcessEnv = {}) {
  const opts: SpawnSyncOptions = { encoding: 'utf8', cwd: tmpdir(), env: { ...process.env, CI: 'true', HOME: tmpdir(), ...env } };
  if (asRoot) Object.assign(opts, { uid: NOBODY, gid: NOBODY });
  const r = spawnSync(process.execPath, [BIN, ...args], opts);
  return { code: r.status, stdout: String(r.stdout), stderr: String(r.stderr) };
}
/** A folder the unprivileged user owns. */
function userDir(prefix: string): string {
  const dir = tmp(prefix);
  chmodSync(dir, 0o755);
  if (asRoot) chownSync(dir, NOBODY, NOBODY);
  return dir;
}

describe('an output folder made read-only, or a parent the user cannot write', () => {
  it('a change into a read-only output folder replaces it (exit 0), warns about the old tree it cannot remove, and the next run works', () => {
    const home = userDir('lock-ro-');
    const cache = join(home, 'cache');
    mkdirSync(cache);
    if (asRoot) chownSync(cache, NOBODY, NOBODY);
    const env = { CROWNLABS_CACHE_DIR: cache };
    const out = join(home, 'gitops');
    const small = labCopy();
    const large = labCopy(true);
    expect(asUser(['gitops', '-f', small, '--config', CONFIG, '-o', out], env).code).toBe(0);
    chmodSync(out, 0o555);
    for (const lab of [large, small]) {
      const r = asUser(['gitops', '-f', lab, '--config', CONFIG, '-o', out], env);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/warning: .*\.gitops\.old-\d+-\d+-\d+: cannot be removed \(EACCES\): the output is complete without it; remove it by hand \(chmod -R u\+w /);
      expect(snapshot(out)).toEqual(fresh(lab));
    }
    // A small change (an update in place) into a read-only folder is rebuilt beside it too.
    chmodSync(out, 0o555);
    const instances = join(small, 'instances.yaml');
    writeFileSync(instances, readFileSync(instances, 'utf8').replace('  running: false\n', '  running: true\n'));
    const r = asUser(['gitops', '-f', small, '--config', CONFIG, '-o', out], env);
    expect(r.code, r.stderr).toBe(0);
    expect(snapshot(out)).toEqual(fresh(small));
  });

  it('an output folder the user cannot read is exit 1 naming it and what to do, not an internal error', () => {
    const parent = userDir('lock-unreadable-');
    const out = join(parent, 'dist');
    mkdirSync(out, { mode: 0o000 });
    if (asRoot) chownSync(out, 0, 0);
    chmodSync(out, 0o000);
    const r = asUser(['synth', '-f', LAB, '--config', CONFIG, '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${out}: error: cannot be read (EACCES): crownlabs compares the folder with what it renders, so this user needs read and write access to it: fix its permissions (e.g. chmod u+rwx), or choose another output (-o)`);
    expect(r.stderr).not.toContain('internal error');
  });

  it('a parent folder the user cannot write is exit 1 naming it and what to do, with no raw errno alone', () => {
    const parent = tmp('lock-noperm-');
    chmodSync(parent, 0o555);
    const out = join(parent, 'gitops');
    const r = asUser(['gitops', '-f', LAB, '--config', CONFIG, '-o', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${out}: error: cannot be written: EACCES: permission denied`);
    expect(r.stderr).toContain(`this user needs write access to ${parent} and to the output folder: fix the permissions (e.g. chmod u+w), or choose another output (-o)`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readdirSync(parent)).toEqual([]);
  });
});
