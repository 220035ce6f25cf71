// Files written by this thread and a writer thread (src/sinks/parallel/file-writer.ts), and trees
// staged while they render (stageNewTree): the same bytes as a write on one thread, every error
// surfaces with its code, and a stage that is abandoned or fails leaves nothing beside the folder.
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OUTPUT_MARKER, OUTPUT_MARKER_TEXT } from '../../../src/output-marker.ts';
import { listFiles, OutputError, stageNewTree, writeTreeAtomically, type TreeContent } from '../../../src/sinks/atomic-tree.ts';
import { ParallelFileWriter, parallelWritesFrom } from '../../../src/sinks/parallel/file-writer.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
const tree = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
/** `n` files in 10 folders, each with its own text (multi-byte characters included). */
const sample = (n: number, tag = '') => new Map(Array.from({ length: n }, (_, i): [string, string] => [`ns-${i % 10}/set-${i}.yaml`, `name: set-${i}${tag}\nnote: é€${'x'.repeat(i % 97)}\n`]));

describe('ParallelFileWriter', () => {
  // 3,000 files queued at once: the worker falls behind, and past its backlog this thread writes them itself.
  it('writes every queued file, in new folders, with its exact bytes', () => {
    const dir = tmp('pw-');
    const want = sample(3000);
    const writer = new ParallelFileWriter();
    for (const [rel, text] of want) writer.queue(join(dir, rel), text);
    writer.finish();
    expect(tree(dir)).toEqual(new Map([...want].sort(([a], [b]) => (a < b ? -1 : 1))));
  });

  // The first files go to the worker, the last ones are written by this thread: an error in either surfaces.
  it.each([
    ['first', 0],
    ['last', 2999],
  ])('a file that cannot be written (the %s one) fails finish() with its code (its folder is a file)', (_, bad) => {
    const dir = tmp('pw-');
    writeFileSync(join(dir, 'blocker'), 'a file, not a folder\n');
    const writer = new ParallelFileWriter();
    [...sample(3000)].forEach(([rel, text], i) => writer.queue(join(dir, i === bad ? 'blocker/x.yaml' : rel), text));
    expect(() => writer.finish()).toThrow(expect.objectContaining({ code: 'EEXIST', path: join(dir, 'blocker') }));
  });
});

describe('a tree staged while it renders (stageNewTree)', () => {
  const saved = process.env.CROWNLABS_PARALLEL_WRITES;
  beforeEach(() => {
    process.env.CROWNLABS_PARALLEL_WRITES = '1';
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.CROWNLABS_PARALLEL_WRITES;
    else process.env.CROWNLABS_PARALLEL_WRITES = saved;
  });

  it('is written exactly as given to the write: a file given another text, one dropped and one not staged', () => {
    const root = tmp('stage-');
    const dir = join(root, 'dist');
    const stage = stageNewTree(dir, { files: 300 })!;
    expect(stage).toBeDefined();
    const files = new Map<string, TreeContent>();
    for (const [rel, text] of sample(300)) files.set(rel, stage.add(rel, text));
    files.set('ns-1/set-1.yaml', 'changed after staging\n');
    files.delete('ns-2/set-2.yaml');
    files.set('late/added.yaml', 'not staged\n');
    // Nothing shows in the folder before the write.
    expect(readdirSync(root).filter((n) => !n.startsWith('.'))).toEqual([]);
    const result = writeTreeAtomically(dir, files, { stage });
    expect(result).toEqual({ written: 300, unchanged: 0, removed: 0 });
    const want = new Map([[OUTPUT_MARKER, OUTPUT_MARKER_TEXT], ...[...sample(300)].filter(([rel]) => rel !== 'ns-2/set-2.yaml')]);
    want.set('ns-1/set-1.yaml', 'changed after staging\n');
    want.set('late/added.yaml', 'not staged\n');
    expect(tree(dir)).toEqual(new Map([...want].sort(([a], [b]) => (a < b ? -1 : 1))));
    expect(readdirSync(root)).toEqual(['dist']);
  });

  it('CROWNLABS_PARALLEL_WRITES: a whole number ≥ 0 is the threshold (0: never); anything else is the default, 512', () => {
    for (const [value, want] of [['0', 0], ['1', 1], ['2000', 2000], ['', 512], ['abc', 512], ['-1', 512], ['1.5', 512], ['1e400', 512], [' 7 ', 7]] as const) {
      process.env.CROWNLABS_PARALLEL_WRITES = value;
      expect(parallelWritesFrom(), JSON.stringify(value)).toBe(want);
    }
  });

  it('abort() removes what was staged; a folder that exists is not staged (the write compares with it)', () => {
    const root = tmp('stage-');
    const dir = join(root, 'dist');
    const stage = stageNewTree(dir, { files: 200 })!;
    for (const [rel, text] of sample(200)) stage.add(rel, text);
    stage.abort();
    expect(readdirSync(root)).toEqual([]);
    mkdirSync(dir);
    expect(stageNewTree(dir, { files: 200 })).toBeUndefined();
    // Too small a tree for a writer thread, or writer threads off.
    process.env.CROWNLABS_PARALLEL_WRITES = '500';
    expect(stageNewTree(join(root, 'other'), { files: 200 })).toBeUndefined();
    process.env.CROWNLABS_PARALLEL_WRITES = '0';
    expect(stageNewTree(join(root, 'other'), { files: 200 })).toBeUndefined();
    expect(readdirSync(root)).toEqual(['dist']);
  });

  it('a staged file that cannot be written is an OutputError and leaves no folder and nothing beside it', () => {
    const root = tmp('stage-');
    const dir = join(root, 'dist');
    const stage = stageNewTree(dir, { files: 200 })!;
    const files = new Map<string, TreeContent>();
    for (const [rel, text] of sample(200)) files.set(rel, stage.add(rel, text));
    // A file the stage must then write where its own folder is: staged as a file, written under it.
    files.set('ns-3/set-3.yaml/inside.yaml', 'x\n');
    expect(() => writeTreeAtomically(dir, files, { stage })).toThrow(OutputError);
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('the commands staging a first write (CROWNLABS_PARALLEL_WRITES=1: even the example lab)', () => {
  it.each(['synth', 'gitops'])('%s writes the same tree as on one thread, chunked namespaces included', (cmd) => {
    const root = tmp('staged-cli-');
    const config = join(root, 'config.yaml');
    copyFileSync(CONFIG, config);
    appendFileSync(config, 'gitopsMaxObjectsPerApp: 8\n');
    const outs = { staged: join(root, 'staged'), single: join(root, 'single') };
    expect(crownlabs([cmd, '-f', LAB, '--config', config, '-o', outs.staged], undefined, { CROWNLABS_PARALLEL_WRITES: '1', CROWNLABS_CACHE_DIR: join(root, 'c1') }).code).toBe(0);
    expect(crownlabs([cmd, '-f', LAB, '--config', config, '-o', outs.single], undefined, { CROWNLABS_PARALLEL_WRITES: '0', CROWNLABS_CACHE_DIR: join(root, 'c0') }).code).toBe(0);
    expect(tree(outs.staged)).toEqual(tree(outs.single));
    if (cmd === 'gitops') expect([...tree(outs.staged).keys()].some((rel) => /^instances\/[^/]+\.2\//.test(rel))).toBe(true);
    expect(readdirSync(root).sort()).toEqual(['c0', 'c1', 'config.yaml', 'single', 'staged']);
  });
});
