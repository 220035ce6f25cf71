import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Problem } from '../../../src/inputs/problems.ts';
import { contentDigest } from '../../../src/cache/render-cache.ts';
import { RunRecord, type RunRecordOptions } from '../../../src/cache/run-record.ts';
import { defaultConfig } from '../../../src/config/config.ts';
import { readInputs } from '../../../src/inputs/parse.ts';
import { listFiles, outputState, writeTreeAtomically } from '../../../src/sinks/atomic-tree.ts';
import { treeStats } from '../../../src/sinks/tree-stats.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';

const tree = (dir: string) => new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
const WARNING: Problem = { severity: 'warning', file: 'lab/a.yaml', document: 2, kind: 'Tenant', name: 'x', message: 'skipped: no target label' };
const SUMMARY = { count: 2, objects: 7 };

describe('run record', () => {
  let root: string | undefined;
  afterEach(() => root && rmSync(root, { recursive: true, force: true }));

  /** A lab of two files, an output folder written from `files`, and a record saved for them. */
  function recorded(): { opts: RunRecordOptions; files: Map<string, string> } {
    root = mkdtempSync(join(tmpdir(), 'run-record-'));
    const lab = join(root, 'lab');
    mkdirSync(lab);
    writeFileSync(join(lab, 'a.yaml'), 'kind: A\n');
    writeFileSync(join(lab, 'b.yaml'), 'kind: B\n');
    const files = new Map([
      ['one.yaml', 'one\n'],
      ['sub/two.yaml', 'two\n'],
    ]);
    const opts: RunRecordOptions = { kind: 'synth', config: defaultConfig(), files: [lab], inputs: [lab], output: join(root, 'out'), dir: join(root, 'cache'), codeHash: 'code-1', cwd: root };
    writeTreeAtomically(opts.output, files);
    RunRecord.open(opts)!.save([WARNING], SUMMARY, files);
    return { opts, files };
  }

  it('replays the warnings and counts of the same inputs into an untouched folder', () => {
    const { opts } = recorded();
    expect(RunRecord.open(opts)!.replay()).toEqual({ problems: [WARNING], summary: SUMMARY });
  });

  it('any change to an input, the file list, the config, the code, the paths or the working folder is a miss', () => {
    const lab = () => join(root!, 'lab');
    const misses: [string, (opts: RunRecordOptions) => RunRecordOptions][] = [
      ['an input edited', (opts) => (writeFileSync(join(lab(), 'b.yaml'), 'kind: C\n'), opts)],
      ['an input added', (opts) => (writeFileSync(join(lab(), 'c.yaml'), ''), opts)],
      ['an input removed', (opts) => (rmSync(join(lab(), 'a.yaml')), opts)],
      ['the config', (opts) => ({ ...opts, config: { ...opts.config, websiteBaseUrl: 'other.example' } })],
      ['the code', (opts) => ({ ...opts, codeHash: 'code-2' })],
      ['the command', (opts) => ({ ...opts, kind: 'gitops' })],
      ['the working folder (names in problems)', (opts) => ({ ...opts, cwd: lab() })],
    ];
    for (const [what, change] of misses) {
      rmSync(root ?? '/nonexistent', { recursive: true, force: true });
      const { opts } = recorded();
      expect(RunRecord.open(opts)!.replay(), what).toBeDefined();
      expect(RunRecord.open(change(opts))?.replay(), what).toBeUndefined();
    }
  });

  it('a run that renders parses the very texts the record was keyed on, even if a file changes on disk meanwhile', () => {
    root = mkdtempSync(join(tmpdir(), 'run-record-'));
    const lab = join(root, 'lab');
    mkdirSync(lab);
    const tenant = (first: string) => `apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata: {name: x}\nspec: {firstName: ${first}, lastName: B, email: a@b.c}\n`;
    writeFileSync(join(lab, 'a.yaml'), tenant('Before'));
    const record = RunRecord.open({ kind: 'synth', config: defaultConfig(), files: [lab], inputs: [lab], output: join(root, 'out'), dir: join(root, 'cache'), codeHash: 'code-1', cwd: root })!;
    // Edited after the key was computed: the output recorded under that key must be what that key read.
    writeFileSync(join(lab, 'a.yaml'), tenant('After'));
    const firstNames = (texts?: RunRecord['texts']) => readInputs([lab], { cwd: root, texts }).objects.map((o) => (o.object.spec as { firstName: string }).firstName);
    expect(firstNames(record.texts)).toEqual(['Before']);
    expect(firstNames()).toEqual(['After']);
  });

  it('an output folder changed since is a miss: a file edited (same size), added, removed, or a leftover beside it', () => {
    const changes: [string, (out: string) => void][] = [
      ['edited', (out) => writeFileSync(join(out, 'one.yaml'), 'ONE\n')],
      ['chmod', (out) => chmodSync(join(out, 'one.yaml'), 0o600)],
      ['added', (out) => writeFileSync(join(out, 'sub', 'three.yaml'), '')],
      ['removed', (out) => rmSync(join(out, 'sub', 'two.yaml'))],
      ['marker removed', (out) => rmSync(join(out, '.crownlabs-output'))],
      ['folder gone', (out) => rmSync(out, { recursive: true })],
      ['leftover of a crashed writer', (out) => mkdirSync(join(out, '..', '.out.new-1-2-3'))],
    ];
    for (const [what, change] of changes) {
      rmSync(root ?? '/nonexistent', { recursive: true, force: true });
      const { opts } = recorded();
      change(opts.output);
      expect(RunRecord.open(opts)!.replay(), what).toBeUndefined();
    }
  });

  it('a run that renders (inputs changed) has a large tree walked on a second thread: as treeStats finds it', () => {
    const { opts } = recorded();
    // The record holds 3 files (the marker included).
    expect(RunRecord.open({ ...opts, backgroundWalkFrom: 1 })!.walked).toBeUndefined(); // a replay walks itself
    writeFileSync(join(root!, 'lab', 'b.yaml'), 'kind: C\n');
    const walked = RunRecord.open({ ...opts, backgroundWalkFrom: 3 })!.walked;
    expect(walked?.result()).toEqual(treeStats(opts.output));
    expect(walked?.result().size).toBe(3);
    expect(RunRecord.open({ ...opts, backgroundWalkFrom: 4 })!.walked).toBeUndefined();
    // Beside a crashed writer's leftover the run settles it first: no early walk.
    mkdirSync(join(opts.output, '..', '.out.new-1-2-3'));
    expect(RunRecord.open({ ...opts, backgroundWalkFrom: 1 })!.walked).toBeUndefined();
  });

  it('a damaged record is a miss; CROWNLABS_RENDER_CACHE=0 and standard input keep no record', () => {
    const { opts, files } = recorded();
    const [name] = readdirSync(opts.dir!).filter((f) => f.startsWith('run-synth-'));
    const file = join(opts.dir!, name);
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.slice(0, text.length - 10));
    expect(RunRecord.open(opts)!.replay()).toBeUndefined();
    writeFileSync(file, text.replace('skipped', 'SKIPPED'));
    expect(RunRecord.open(opts)!.replay()).toBeUndefined();
    writeFileSync(file, text);
    expect(RunRecord.open(opts)!.replay()).toBeDefined();
    expect(RunRecord.open({ ...opts, files: ['-'] })).toBeUndefined();
    process.env.CROWNLABS_RENDER_CACHE = '0';
    try {
      expect(RunRecord.open(opts)).toBeUndefined();
    } finally {
      delete process.env.CROWNLABS_RENDER_CACHE;
    }
    // A folder that does not hold what the run wrote is not recorded.
    rmSync(file);
    RunRecord.open(opts)!.save([], SUMMARY, new Map([...files, ['one.yaml', 'longer than before\n']]));
    expect(readdirSync(opts.dir!).filter((f) => f.startsWith('run-synth-'))).toEqual([]);
  });

  it('tells a file the folder holds as recorded (same stats, same digest) from any other, whatever the inputs now', () => {
    const { opts, files } = recorded();
    const state = outputState(opts.output)!;
    writeFileSync(join(root!, 'lab', 'a.yaml'), 'kind: Edited\n');
    const record = RunRecord.open(opts)!;
    expect(record.replay()).toBeUndefined();
    expect(record.unchanged('one.yaml', contentDigest(files.get('one.yaml')!), state.get('one.yaml'))).toBe(true);
    expect(record.unchanged('one.yaml', contentDigest('other\n'), state.get('one.yaml'))).toBe(false);
    expect(record.unchanged('one.yaml', contentDigest(files.get('one.yaml')!), state.get('sub/two.yaml'))).toBe(false);
    expect(record.unchanged('three.yaml', contentDigest(files.get('one.yaml')!), state.get('one.yaml'))).toBe(false);
    expect(record.unchanged('one.yaml', contentDigest(files.get('one.yaml')!), undefined)).toBe(false);
    // Rewritten with the same bytes: its mtime and ctime differ from the record's.
    writeFileSync(join(opts.output, 'one.yaml'), files.get('one.yaml')!);
    expect(record.unchanged('one.yaml', contentDigest(files.get('one.yaml')!), outputState(opts.output)!.get('one.yaml'))).toBe(false);
  });
});

describe('synth and gitops with the run record', () => {
  it.each(['synth', 'gitops'])('%s prints the same warnings on a replay, and repairs an edited output folder', (command) => {
    const root = mkdtempSync(join(tmpdir(), 'cli-record-'));
    try {
      const lab = join(root, 'lab');
      cpSync(LAB, lab, { recursive: true });
      // A Tenant without the target label: a warning every run prints.
      writeFileSync(join(lab, 'unlabelled.yaml'), 'apiVersion: crownlabs.polito.it/v1alpha2\nkind: Tenant\nmetadata:\n  name: no.label\nspec:\n  email: no.label@example.org\n  firstName: No\n  lastName: Label\n');
      const env = { CROWNLABS_CACHE_DIR: join(root, 'cache') };
      const out = join(root, 'out');
      const run = () => crownlabs([command, '-f', lab, '--config', CONFIG, '-o', out], undefined, env);
      const first = run();
      expect(first.code).toBe(0);
      expect(first.stderr).toMatch(/unlabelled\.yaml.*warning: skipped: no target label/);
      const ref = join(root, 'ref');
      const fresh = crownlabs([command, '-f', lab, '--config', CONFIG, '-o', ref], undefined, { CROWNLABS_RENDER_CACHE: '0' });
      const second = run();
      expect(second.code).toBe(0);
      // The same lines as a run without any cache, the counts aside.
      const warnings = (s: string) => s.split('\n').filter((l) => l.includes('warning'));
      expect(warnings(second.stderr)).toEqual(warnings(fresh.stderr));
      expect(second.stderr).toMatch(/\(0 written, \d+ unchanged, 0 removed\)/);
      expect(tree(out)).toEqual(tree(ref));
      // An output file edited by hand: the next run writes it back.
      const victim = [...listFiles(out)].find((f) => f.endsWith('.yaml'))!;
      writeFileSync(join(out, victim), 'edited\n');
      expect(run().stderr).toMatch(/\(1 written,/);
      expect(tree(out)).toEqual(tree(ref));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
