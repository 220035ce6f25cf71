import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandInputPaths } from '../../../src/inputs/parse.ts';
import { isOutputFolder, OUTPUT_MARKER, OUTPUT_MARKER_TEXT } from '../../../src/output-marker.ts';
import { KEEP, listFiles, OutputError, outputState, patchTree, writeFileAtomically, writeTreeAtomically, type TreeContent } from '../../../src/sinks/atomic-tree.ts';
import { BackgroundTreeStats, treeStats } from '../../../src/sinks/tree-stats.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const tree = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
const files = new Map([
  ['a/x.yaml', 'x: 1\n'],
  ['b.yaml', 'b: 1\n'],
]);

/** The OutputError a call throws (undefined when it does not throw one). */
function refusal(write: () => unknown): OutputError | undefined {
  try {
    write();
  } catch (err) {
    if (err instanceof OutputError) return err;
    throw err;
  }
  return undefined;
}

describe('the output folder: only a missing, empty or marked folder is replaced', () => {
  it('writes a missing or empty folder, with the marker, and replaces it again', () => {
    const root = tmp('out-');
    writeTreeAtomically(join(root, 'new', 'deep', 'dist'), files);
    expect(tree(join(root, 'new', 'deep', 'dist'))).toEqual(new Map([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...files]));
    mkdirSync(join(root, 'empty'));
    writeTreeAtomically(join(root, 'empty'), files);
    expect(isOutputFolder(join(root, 'empty'))).toBe(true);
    expect(writeTreeAtomically(join(root, 'empty'), new Map([['c.yaml', 'c\n']]))).toEqual({ written: 1, unchanged: 0, removed: 2 });
    expect([...listFiles(join(root, 'empty'))].sort()).toEqual([OUTPUT_MARKER, 'c.yaml']);
  });

  it('leaves a folder that already holds exactly the tree untouched (no staging, no swap), and replaces it on any difference', () => {
    const root = tmp('out-');
    const dir = join(root, 'dist');
    writeTreeAtomically(dir, files);
    const ino = statSync(dir).ino;
    expect(writeTreeAtomically(dir, files)).toEqual({ written: 0, unchanged: 2, removed: 0 });
    expect(statSync(dir).ino).toBe(ino);
    expect(readdirSync(root)).toEqual(['dist']);
    // A file edited by hand, a file missing, one added, or the marker changed: the tree is written again.
    for (const spoil of [
      () => writeFileSync(join(dir, 'b.yaml'), 'b: 2\n'),
      () => rmSync(join(dir, 'a', 'x.yaml')),
      () => writeFileSync(join(dir, 'extra.yaml'), 'e\n'),
      () => writeFileSync(join(dir, OUTPUT_MARKER), `${OUTPUT_MARKER_TEXT}x`),
    ]) {
      spoil();
      writeTreeAtomically(dir, files);
      expect(tree(dir)).toEqual(new Map([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...files]));
    }
  });

  it('refuses a folder holding anything it did not write, and leaves it as it was', () => {
    const dir = tmp('repo-');
    mkdirSync(join(dir, '.git'));
    writeFileSync(join(dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(dir, 'notes.txt'), 'mine\n');
    const before = tree(dir);
    const err = refusal(() => writeTreeAtomically(dir, files));
    expect(err?.message).toMatch(/holds files crownlabs did not write \(\.git, notes\.txt\) and no \.crownlabs-output marker/);
    expect(tree(dir)).toEqual(before);
    expect(readdirSync(join(dir, '..')).filter((n) => n.startsWith(`.${dir.split('/').pop()}.`))).toEqual([]);
    // A folder holding only dot files is not empty either.
    const dots = tmp('dots-');
    writeFileSync(join(dots, '.env'), 'SECRET=1\n');
    expect(refusal(() => writeTreeAtomically(dots, files))?.message).toMatch(/\.env/);
    expect(readFileSync(join(dots, '.env'), 'utf8')).toBe('SECRET=1\n');
  });

  it('refuses an output that is, contains or is inside an input or the config file (real paths, through links)', () => {
    const root = tmp('overlap-');
    const lab = join(root, 'lab');
    mkdirSync(lab);
    writeFileSync(join(lab, 'tenants.yaml'), 'kind: Tenant\n');
    writeFileSync(join(root, 'config.yaml'), 'websiteBaseUrl: x\n');
    symlinkSync(lab, join(root, 'lab-link'));
    const cases: [string, string[], RegExp][] = [
      [lab, [lab], /is the input/],
      [join(root, 'lab-link'), [lab], /symbolic link/],
      [lab, [join(root, 'lab-link')], /is the input/],
      [join(lab, 'out'), [lab], /is inside the input/],
      [join(root, 'lab-link', 'out'), [lab], /is inside the input/],
      [root, [lab], /contains the input/],
      [root, [join(root, 'config.yaml')], /contains the input/],
      [join(root, 'config.yaml'), [join(root, 'config.yaml')], /is not a folder/],
    ];
    for (const [out, inputs, message] of cases) expect(refusal(() => writeTreeAtomically(out, files, { inputs }))?.message, out).toMatch(message);
    expect(tree(lab)).toEqual(new Map([['tenants.yaml', 'kind: Tenant\n']]));
    expect(readdirSync(lab)).toEqual(['tenants.yaml']);
  });

  it('refuses a symbolic link as the output (even to a marked folder, even dangling) and keeps the link', () => {
    const root = tmp('link-');
    writeTreeAtomically(join(root, 'real'), files);
    symlinkSync(join(root, 'real'), join(root, 'dist'));
    symlinkSync(join(root, 'nowhere'), join(root, 'dangling'));
    expect(refusal(() => writeTreeAtomically(join(root, 'dist'), new Map()))?.message).toMatch(/is a symbolic link to .*real: .*refuses links/);
    expect(refusal(() => writeTreeAtomically(join(root, 'dangling'), files))?.message).toMatch(/is a symbolic link/);
    expect(tree(join(root, 'real'))).toEqual(new Map([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...files]));
    expect(readdirSync(root).sort()).toEqual(['dangling', 'dist', 'real']);
    // A link among the parents is fine: the folder is written in the real parent.
    symlinkSync(root, join(root, 'up'));
    writeTreeAtomically(join(root, 'up', 'other'), files);
    expect(isOutputFolder(join(root, 'other'))).toBe(true);
  });

  it('gives a clear error, quickly, for outputs that cannot be folders: a file, below a file, the root, /proc', () => {
    const root = tmp('bad-');
    writeFileSync(join(root, 'file'), 'keep\n');
    expect(refusal(() => writeTreeAtomically(join(root, 'file'), files))?.message).toMatch(/is not a folder/);
    expect(refusal(() => writeTreeAtomically(join(root, 'file', 'sub'), files))?.message).toMatch(/not a folder/);
    expect(refusal(() => writeTreeAtomically('/', files))?.message).toMatch(/is the root folder/);
    // Node's recursive mkdir loops forever here; the output is created one folder at a time.
    expect(refusal(() => writeTreeAtomically('/proc/self/x', files))?.message).toMatch(/cannot be written/);
    expect(refusal(() => writeTreeAtomically('/proc/self/x/y/z', files))?.message).toMatch(/cannot (be written|create)/);
    expect(readFileSync(join(root, 'file'), 'utf8')).toBe('keep\n');
  });

  it('never writes a path outside the folder', () => {
    const root = tmp('escape-');
    for (const rel of ['../evil.yaml', 'a/../../evil.yaml', '/etc/evil', 'a//b', OUTPUT_MARKER]) {
      expect(() => writeTreeAtomically(join(root, 'dist'), new Map([[rel, 'x']])), rel).toThrow(/refusing to write the path/);
    }
    expect(readdirSync(root)).toEqual([]);
  });

  it('a watch patch follows the same rules and falls back to a full write when the folder is gone', () => {
    const root = tmp('patch-');
    const dir = join(root, 'dist');
    writeTreeAtomically(dir, files);
    const next = new Map([
      ['a/x.yaml', 'x: 2\n'],
      ['c/d.yaml', 'd\n'],
    ]);
    expect(patchTree(dir, files, next)).toBe(3);
    expect(tree(dir)).toEqual(new Map([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...next]));
    expect(readdirSync(root)).toEqual(['dist']);
    const notMine = join(root, 'mine');
    mkdirSync(notMine);
    writeFileSync(join(notMine, 'keep'), 'k');
    expect(refusal(() => patchTree(notMine, files, next))?.message).toMatch(/did not write/);
    expect(readdirSync(notMine)).toEqual(['keep']);
  });
});

describe('an update in place (a write given the folder state)', () => {
  const big = new Map(Array.from({ length: 100 }, (_, i): [string, string] => [`sets/s${i}.yaml`, `i: ${i}\n`]));
  const inode = (dir: string, rel: string) => statSync(join(dir, rel)).ino;

  it('a small change renames in only the changed files, removes extra ones (hand-added too), and reports the stats a walk finds', () => {
    const dir = join(tmp('inplace-'), 'dist');
    writeTreeAtomically(dir, big);
    writeFileSync(join(dir, 'sets', 'by-hand.yaml'), 'mine\n');
    const before = inode(dir, 'sets/s1.yaml');
    const next = new Map<string, TreeContent>([...big].map(([rel, c]) => [rel, rel === 'sets/s1.yaml' ? KEEP : c]));
    next.set('sets/s2.yaml', 'i: changed\n');
    next.delete('sets/s3.yaml');
    next.set('new/one.yaml', 'new\n');
    const state = outputState(dir)!;
    const r = writeTreeAtomically(dir, next, { state });
    expect(r).toMatchObject({ written: 2, unchanged: 98, removed: 2 });
    expect(r.stats).toEqual(treeStats(dir));
    expect(inode(dir, 'sets/s1.yaml')).toBe(before);
    const want = new Map([...big, ['sets/s2.yaml', 'i: changed\n'], ['new/one.yaml', 'new\n']]);
    want.delete('sets/s3.yaml');
    expect(tree(dir)).toEqual(new Map<string, string>([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...want].sort() as [string, string][]));
    expect(readdirSync(join(dir, '..'))).toEqual(['dist']);
    // Nothing changed: nothing written, the same stats.
    const again = writeTreeAtomically(dir, want, { state: outputState(dir)! });
    expect(again).toMatchObject({ written: 0, removed: 0 });
    expect(again.stats).toEqual(treeStats(dir));
    // The last file of a folder removed: the folder goes too (as in a fresh write), and the next
    // run can still read the folder's state (an empty folder would make it rebuild everything).
    want.delete('new/one.yaml');
    expect(writeTreeAtomically(dir, want, { state: outputState(dir)! })).toMatchObject({ written: 0, removed: 1 });
    expect(readdirSync(dir)).not.toContain('new');
    expect(outputState(dir)).toEqual(treeStats(dir));
  });

  it('a large change, or a folder with an empty folder in it, rebuilds the tree beside it and swaps it in', () => {
    const dir = join(tmp('inplace-'), 'dist');
    writeTreeAtomically(dir, big);
    const before = inode(dir, 'sets/s0.yaml');
    // More than max(64, a quarter of the files) change.
    const most = new Map([...big].map(([rel, c], i): [string, string] => [rel, i % 10 < 7 && i > 0 ? `${c}changed\n` : c]));
    const r = writeTreeAtomically(dir, most, { state: outputState(dir)! });
    expect(r).toMatchObject({ written: 69, unchanged: 31, removed: 0 });
    expect(r.stats).toBeUndefined();
    // Unchanged files are hard links of the old ones.
    expect(inode(dir, 'sets/s0.yaml')).toBe(before);
    expect(tree(dir).get('sets/s1.yaml')).toBe('i: 1\nchanged\n');
    mkdirSync(join(dir, 'empty'));
    expect(outputState(dir)).toBeUndefined();
    writeTreeAtomically(dir, big);
    expect(listFiles(dir).size).toBe(101);
    expect(readdirSync(dir)).not.toContain('empty');
  });

  it('a file added by hand under a name the journal cannot carry is removed by a rebuild', () => {
    for (const name of ['.crownlabs-patch', 'back\\slash.yaml']) {
      const dir = join(tmp('inplace-'), 'dist');
      writeTreeAtomically(dir, files);
      writeFileSync(join(dir, name), 'mine\n');
      const r = writeTreeAtomically(dir, files, { state: outputState(dir)! });
      expect(r, name).toMatchObject({ written: 0, removed: 1 });
      expect(tree(dir), name).toEqual(new Map<string, string>([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...files].sort() as [string, string][]));
      expect(readdirSync(join(dir, '..')), name).toEqual(['dist']);
    }
  });

  it('refuses KEEP without the state it was checked against, or for a file the folder does not hold', () => {
    const dir = join(tmp('inplace-'), 'dist');
    writeTreeAtomically(dir, files);
    expect(() => writeTreeAtomically(dir, new Map<string, TreeContent>([['b.yaml', KEEP]]))).toThrow(/without the folder state/);
    expect(() => writeTreeAtomically(dir, new Map<string, TreeContent>([['c.yaml', KEEP]]), { state: outputState(dir)! })).toThrow(/does not hold/);
    expect(tree(dir)).toEqual(new Map<string, string>([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...files].sort() as [string, string][]));
  });

  it('outputState settles a crashed writer first and follows the refusal rules', () => {
    const root = tmp('inplace-');
    const dir = join(root, 'dist');
    expect(outputState(dir)).toBeUndefined();
    writeTreeAtomically(dir, files);
    // A dead writer's partial staging folder (pid 999999 is not running).
    mkdirSync(join(root, '.dist.new-999999-1-0'));
    expect(outputState(dir)!.has('b.yaml')).toBe(true);
    expect(readdirSync(root)).toEqual(['dist']);
    const notMine = join(root, 'mine');
    mkdirSync(notMine);
    writeFileSync(join(notMine, 'keep'), 'k');
    expect(refusal(() => outputState(notMine))?.message).toMatch(/did not write/);
  });
});

describe('the folder walked on a second thread (BackgroundTreeStats)', () => {
  const thrown = (walk: () => unknown) => {
    try {
      walk();
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  };

  it('gives what treeStats gives, errors included, whatever the file names', () => {
    const dir = tmp('walk-');
    for (const rel of ['a.yaml', 'deep/er/b.yaml', 'with space/c d.yaml', 'tab\tand\nnewline.yaml', 'ünï/cödé.yaml']) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), rel);
    }
    const walked = new BackgroundTreeStats(dir).result();
    expect(walked.size).toBe(5);
    expect(walked).toEqual(treeStats(dir));
    mkdirSync(join(dir, 'deep', 'empty'));
    expect(thrown(() => new BackgroundTreeStats(dir).result())).toBe('deep/empty: an empty folder');
    expect(thrown(() => treeStats(dir))).toBe('deep/empty: an empty folder');
    rmSync(join(dir, 'deep', 'empty'), { recursive: true });
    symlinkSync('a.yaml', join(dir, 'link.yaml'));
    expect(thrown(() => new BackgroundTreeStats(dir).result())).toBe('link.yaml: not a regular file');
    expect(thrown(() => new BackgroundTreeStats(join(dir, 'missing')).result())).toMatch(/ENOENT/);
  });

  it('walks on this thread when the other does not start, fails before it answers, or stalls', () => {
    const dir = tmp('walk-');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a.yaml'), 'a');
    const limits = { startMs: 200, stallMs: 200 };
    const started = "Atomics.add(new Int32Array(require('node:worker_threads').workerData.state), 1, 1);";
    for (const source of ['setInterval(() => {}, 1000);', "throw new Error('boom');", `${started} setInterval(() => {}, 1000);`]) {
      const t0 = Date.now();
      expect(new BackgroundTreeStats(dir, { source, ...limits }).result(), source).toEqual(treeStats(dir));
      expect(Date.now() - t0, source).toBeLessThan(5_000);
    }
  });

  it('outputState takes the early walk of its folder, unless it settled a crashed writer since', () => {
    const root = tmp('walk-');
    const dir = join(root, 'dist');
    writeTreeAtomically(dir, files);
    const walked = new BackgroundTreeStats(dir);
    walked.result();
    writeFileSync(join(dir, 'late.yaml'), 'late\n');
    // The state as walked (the run compares with it; a file changed meanwhile is caught by the next run's stats).
    expect(outputState(dir, { walked })).toEqual(walked.result());
    expect(outputState(dir, { walked })!.has('late.yaml')).toBe(false);
    expect(outputState(dir, { walked: new BackgroundTreeStats(join(root, 'other')) })!.has('late.yaml')).toBe(true);
    // A dead writer's leftover settled by outputState: the folder may have changed, it is walked again.
    mkdirSync(join(root, '.dist.new-999999-1-0'));
    expect(outputState(dir, { walked })!.has('late.yaml')).toBe(true);
    expect(readdirSync(root)).toEqual(['dist']);
  });
});

describe('the output file (manifests -o)', () => {
  const header = '# Generated by a test\n';
  it('writes with the header, replaces its own file, and refuses any other file, a folder, a link, a FIFO-like file or the config', () => {
    const root = tmp('file-');
    const out = join(root, 'platform.yaml');
    writeFileAtomically(out, header, 'a: 1\n');
    writeFileAtomically(out, header, 'a: 2\n');
    expect(readFileSync(out, 'utf8')).toBe(`${header}a: 2\n`);
    writeFileSync(join(root, 'README.md'), '# mine\n');
    expect(refusal(() => writeFileAtomically(join(root, 'README.md'), header, 'x'))?.message).toMatch(/was not written by crownlabs/);
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('# mine\n');
    expect(refusal(() => writeFileAtomically(root, header, 'x'))?.message).toMatch(/is a folder/);
    symlinkSync(out, join(root, 'link.yaml'));
    expect(refusal(() => writeFileAtomically(join(root, 'link.yaml'), header, 'x'))?.message).toMatch(/symbolic link/);
    expect(refusal(() => writeFileAtomically('/dev/null', header, 'x'))?.message).toMatch(/symbolic link|not a regular file/);
    writeFileSync(join(root, 'c.yaml'), '');
    expect(refusal(() => writeFileAtomically(join(root, 'c.yaml'), header, 'x', { inputs: [join(root, 'c.yaml')] }))?.message).toMatch(/is the input/);
    expect(readdirSync(root).sort()).toEqual(['README.md', 'c.yaml', 'link.yaml', 'platform.yaml']);
  });
});

describe('the input reader never reads an output folder', () => {
  it('skips a marked folder inside an input folder, and names one given explicitly', () => {
    const root = tmp('reader-');
    writeFileSync(join(root, 'tenants.yaml'), 'kind: Tenant\n');
    writeTreeAtomically(join(root, 'dist'), new Map([['tenants/x.yaml', 'kind: Namespace\n']]));
    mkdirSync(join(root, 'more'));
    writeFileSync(join(root, 'more', 'w.yaml'), 'kind: Workspace\n');
    expect(expandInputPaths([root])).toEqual({ files: [join(root, 'more', 'w.yaml'), join(root, 'tenants.yaml')], problems: [] });
    const explicit = expandInputPaths([join(root, 'dist')]);
    expect(explicit.files).toEqual([]);
    expect(explicit.problems).toEqual([expect.objectContaining({ severity: 'error', file: join(root, 'dist'), message: expect.stringMatching(/output folder of crownlabs/) })]);
  });
});
