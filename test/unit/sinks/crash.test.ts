// A crash at any instant of a write leaves the output recoverable: each case runs the real CLI with
// CROWNLABS_FAULT=<point>, which SIGKILLs the process at that point of the write, then checks the
// folder and that the next write settles it to the old or the new tree with no leftovers beside it.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFESTS_HEADER } from '../../../src/cli/manifests.ts';
import { listFiles, settleLeftovers } from '../../../src/sinks/atomic-tree.ts';
import { checkOutputFolder } from '../../../src/sinks/output-guard.ts';
import { BIN, CONFIG, LAB } from '../../support/cli.ts';

type Tree = Map<string, string> | 'missing';
const tree = (dir: string): Tree => (existsSync(dir) ? new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')])) : 'missing');
/** What a write of `path` left beside it (`.<name>.new-…`, `.old-…`, `.patch-…`, `.tmp-…`). */
const leftovers = (path: string) => readdirSync(dirname(path)).filter((n) => n.startsWith(`.${basename(path)}.`));
/** The same without the lock file a killed run leaves too (`.<name>.lock`, taken over by the next write). */
const stagedLeftovers = (path: string) => {
  const all = leftovers(path);
  expect(all).toContain(`.${basename(path)}.lock`);
  return all.filter((n) => n !== `.${basename(path)}.lock`);
};

/** `env`: e.g. CROWNLABS_RENDER_CACHE=0, which makes every synth a full rebuild (no folder state to update in place). */
function run(args: string[], fault?: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, CI: 'true', CROWNLABS_CACHE_DIR: join(root, 'cache'), CROWNLABS_FAULT: fault ?? '', ...env } });
  return { code: r.status, signal: r.signal, stderr: r.stderr };
}
const FULL = { CROWNLABS_RENDER_CACHE: '0' };

/** The edit between the old and the new tree: one Instance gone, another one started (files written and removed). */
function editLab(lab: string): void {
  const file = join(lab, 'instances.yaml');
  const docs = readFileSync(file, 'utf8').split(/^---\n/m);
  const kept = docs.filter((d) => !/name: green-tea-6831\n/.test(d)).map((d) => d.replace('  running: false\n', '  running: true\n'));
  writeFileSync(file, kept.join('---\n'));
}

const root = mkdtempSync(join(tmpdir(), 'crash-'));
const labOld = join(root, 'lab-old');
const labNew = join(root, 'lab-new');
const golden: Record<'synthOld' | 'synthNew' | 'gitopsOld' | 'gitopsNew', Map<string, string>> = {} as never;

beforeAll(() => {
  cpSync(LAB, labOld, { recursive: true });
  cpSync(LAB, labNew, { recursive: true });
  editLab(labNew);
  for (const [name, cmd, lab] of [
    ['synthOld', 'synth', labOld],
    ['synthNew', 'synth', labNew],
    ['gitopsOld', 'gitops', labOld],
    ['gitopsNew', 'gitops', labNew],
  ] as const) {
    const out = join(root, 'golden', name);
    expect(run([cmd, '-f', lab, '--config', CONFIG, '-o', out]).code).toBe(0);
    golden[name] = tree(out) as Map<string, string>;
  }
  expect(golden.synthNew).not.toEqual(golden.synthOld);
}, 180_000);

describe('a crash while synth rebuilds its folder', () => {
  // What the folder holds right after the crash, and after the next write settles it.
  const cases: [point: string, atCrash: 'old' | 'new' | 'missing', settled: 'old' | 'new'][] = [
    ['stage', 'old', 'old'], // half the new tree staged, no marker yet: discarded
    ['staged', 'old', 'old'], // complete, not swapped in: the folder is still the old tree
    ['after-retire', 'missing', 'new'], // between the renames: the complete new tree is moved in
    ['after-install', 'new', 'new'], // the old tree waits beside it: deleted
  ];
  it.each(cases)('killed at %s: the folder is %s, then settled to the %s tree with no leftovers', (point, atCrash, settled) => {
    const out = join(mkdtempSync(join(root, `synth-${point}-`)), 'dist');
    cpSync(join(root, 'golden', 'synthOld'), out, { recursive: true });
    const r = run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], point, FULL);
    expect(r.signal).toBe('SIGKILL');
    const want = { old: golden.synthOld, new: golden.synthNew, missing: 'missing' as const };
    expect(tree(out)).toEqual(want[atCrash]);
    expect(leftovers(out).length).toBeGreaterThan(0);
    settleLeftovers(checkOutputFolder(out));
    expect(tree(out)).toEqual(want[settled]);
    expect(leftovers(out)).toEqual([]);
  });

  it('the next run settles a crash between the renames by itself: the new tree comes back unchanged', () => {
    const out = join(mkdtempSync(join(root, 'synth-next-')), 'dist');
    cpSync(join(root, 'golden', 'synthOld'), out, { recursive: true });
    expect(run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], 'after-retire', FULL).signal).toBe('SIGKILL');
    const next = run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], undefined, FULL);
    expect(next.code).toBe(0);
    // Every file unchanged: the staged tree was moved in, then found equal to what this run renders.
    expect(next.stderr).toMatch(/\(0 written, 11 unchanged, 0 removed\)/);
    expect(tree(out)).toEqual(golden.synthNew);
    expect(leftovers(out)).toEqual([]);
  });

  // A first write, staged on a writer thread while the sets render (CROWNLABS_PARALLEL_WRITES=1: even the small lab).
  it.each(['stage', 'staged'])('a first write staged while it renders, killed at %s: no folder; the next run settles and writes it', (point) => {
    const out = join(mkdtempSync(join(root, `synth-first-${point}-`)), 'dist');
    const staged = { CROWNLABS_PARALLEL_WRITES: '1' };
    expect(run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], point, staged).signal).toBe('SIGKILL');
    expect(tree(out)).toBe('missing');
    expect(stagedLeftovers(out)).toHaveLength(1);
    const next = run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], undefined, staged);
    expect(next.code).toBe(0);
    expect(tree(out)).toEqual(golden.synthNew);
    expect(leftovers(out)).toEqual([]);
  });

  it('gitops: the same, and a partial staging folder of a dead run is removed by the next run', () => {
    const out = join(mkdtempSync(join(root, 'gitops-')), 'gitops');
    cpSync(join(root, 'golden', 'gitopsOld'), out, { recursive: true });
    expect(run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out], 'stage', FULL).signal).toBe('SIGKILL');
    expect(tree(out)).toEqual(golden.gitopsOld);
    const [partial] = stagedLeftovers(out);
    expect(partial).toMatch(/^\.gitops\.new-\d+-\d+-\d+$/);
    expect(run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out, '--check']).code).toBe(1);
    expect(run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out], undefined, FULL).code).toBe(0);
    expect(tree(out)).toEqual(golden.gitopsNew);
    expect(leftovers(out)).toEqual([]);
    expect(run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out, '--check']).code).toBe(0);
  });
});

describe('a crash while synth updates its folder in place (a small change, caches on)', () => {
  const cases: [point: string, atCrash: 'old' | 'new' | 'mixed', settled: 'old' | 'new'][] = [
    ['patch-stage', 'old', 'old'], // changed files half staged, no journal: discarded
    ['patch-staged', 'old', 'new'], // journal written: rolled forward
    ['patch-apply', 'new', 'new'], // the one changed file moved in (the removal came first), staging left: deleted
    ['patch-applied', 'new', 'new'], // all moved in, staging left: deleted
  ];
  it.each(cases)('killed at %s: the folder is %s, then the next run settles it and writes the new tree', (point, atCrash, settled) => {
    const out = join(mkdtempSync(join(root, `synth-patch-${point}-`)), 'dist');
    expect(run(['synth', '-f', labOld, '--config', CONFIG, '-o', out]).code).toBe(0);
    expect(tree(out)).toEqual(golden.synthOld);
    expect(run(['synth', '-f', labNew, '--config', CONFIG, '-o', out], point).signal).toBe('SIGKILL');
    const want = { old: golden.synthOld, new: golden.synthNew };
    if (atCrash === 'mixed') {
      expect(tree(out)).not.toEqual(want.old);
      expect(tree(out)).not.toEqual(want.new);
    } else expect(tree(out)).toEqual(want[atCrash]);
    expect(stagedLeftovers(out)).toHaveLength(1);
    // The next run is no replay (leftovers beside the folder): it settles them, then writes what is left.
    const next = run(['synth', '-f', labNew, '--config', CONFIG, '-o', out]);
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(settled === 'new' ? /\(0 written, 11 unchanged, 0 removed\)/ : /\([1-9]\d* written/);
    expect(tree(out)).toEqual(golden.synthNew);
    expect(leftovers(out)).toEqual([]);
    // And the run after that replays: nothing is read but the inputs, nothing written.
    expect(run(['synth', '-f', labNew, '--config', CONFIG, '-o', out]).stderr).toMatch(/\(0 written, 11 unchanged, 0 removed\)/);
  });
});

describe('a crash while gitops updates its folder in place', () => {
  it('killed halfway through moving the changed files in: the next run rolls the journal forward and writes nothing more', () => {
    const out = join(mkdtempSync(join(root, 'gitops-patch-')), 'gitops');
    expect(run(['gitops', '-f', labOld, '--config', CONFIG, '-o', out]).code).toBe(0);
    expect(tree(out)).toEqual(golden.gitopsOld);
    expect(run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out], 'patch-apply').signal).toBe('SIGKILL');
    expect(tree(out)).not.toEqual(golden.gitopsOld);
    expect(tree(out)).not.toEqual(golden.gitopsNew);
    expect(stagedLeftovers(out)).toHaveLength(1);
    const next = run(['gitops', '-f', labNew, '--config', CONFIG, '-o', out]);
    expect(next.code).toBe(0);
    expect(next.stderr).toMatch(/\(0 written, \d+ unchanged, 0 removed\)/);
    expect(tree(out)).toEqual(golden.gitopsNew);
    expect(leftovers(out)).toEqual([]);
  });
});

describe('a crash during a gitops --watch update', () => {
  /** Starts watch mode on a copy of the old lab, edits it to the new one, and waits for the fault to kill it. */
  async function crashWatch(point: string): Promise<string> {
    const dir = mkdtempSync(join(root, `watch-${point}-`));
    const lab = join(dir, 'lab');
    cpSync(labOld, lab, { recursive: true });
    const out = join(dir, 'gitops');
    const child = spawn(process.execPath, [BIN, 'gitops', '-f', lab, '--config', CONFIG, '-o', out, '--watch', '--debounce', '50'], { env: { ...process.env, CI: 'true', CROWNLABS_FAULT: point } });
    // Never left running: a run that does not crash is stopped, and the test fails on its signal.
    const guard = setTimeout(() => child.kill('SIGTERM'), 45_000);
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
    const watching = new Promise<void>((resolve, reject) => {
      child.stderr.on('data', () => /watching/.test(stderr) && resolve());
      void exited.then(() => reject(new Error(`exited before watching:\n${stderr}`)));
    });
    try {
      await watching;
      expect(tree(out)).toEqual(golden.gitopsOld);
      cpSync(join(labNew, 'instances.yaml'), join(lab, 'instances.yaml'));
      expect(await exited, stderr).toBe('SIGKILL');
      return out;
    } finally {
      clearTimeout(guard);
      child.kill('SIGTERM'); // no-op once it has exited
    }
  }

  const cases: [point: string, atCrash: 'old' | 'new' | 'mixed', settled: 'old' | 'new'][] = [
    ['patch-stage', 'old', 'old'], // changed files half staged, no journal: discarded
    ['patch-staged', 'old', 'new'], // journal written: rolled forward
    ['patch-apply', 'mixed', 'new'], // half moved in: rolled forward
    ['patch-applied', 'new', 'new'], // all moved in, staging left: deleted
  ];
  it.each(cases)('killed at %s: the folder is %s, then settled to the %s tree with no leftovers', async (point, atCrash, settled) => {
    const out = await crashWatch(point);
    const want = { old: golden.gitopsOld, new: golden.gitopsNew };
    if (atCrash === 'mixed') {
      expect(tree(out)).not.toEqual(want.old);
      expect(tree(out)).not.toEqual(want.new);
    } else expect(tree(out)).toEqual(want[atCrash]);
    expect(stagedLeftovers(out)).toHaveLength(1);
    settleLeftovers(checkOutputFolder(out));
    expect(tree(out)).toEqual(want[settled]);
    expect(leftovers(out)).toEqual([]);
  });
});

describe('a crash while manifests -o replaces its file', () => {
  it('leaves the old file, and the next run removes the temporary file', () => {
    const out = join(mkdtempSync(join(root, 'manifests-')), 'platform.yaml');
    expect(run(['manifests', '--config', CONFIG, '--platform-shards', 'a', '-o', out]).code).toBe(0);
    const old = readFileSync(out, 'utf8');
    expect(old.startsWith(MANIFESTS_HEADER)).toBe(true);
    expect(run(['manifests', '--config', CONFIG, '--platform-shards', 'a,b', '-o', out], 'file-staged').signal).toBe('SIGKILL');
    expect(readFileSync(out, 'utf8')).toBe(old);
    expect(stagedLeftovers(out)).toHaveLength(1);
    expect(run(['manifests', '--config', CONFIG, '--platform-shards', 'a,b', '-o', out]).code).toBe(0);
    expect(readFileSync(out, 'utf8')).toContain('crownlabs-controller-b');
    expect(leftovers(out)).toEqual([]);
  });
});
