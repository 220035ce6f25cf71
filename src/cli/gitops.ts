import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import chokidar from 'chokidar';
import type { Command } from 'commander';
import { loadInventory } from '../api/load.ts';
import { formatProblem } from '../api/problems.ts';
import { RenderCache, isGitopsEntry } from '../cache/render-cache.ts';
import { compose, renderUnit } from '../compose/compose.ts';
import type { ComposerConfig } from '../config/config.ts';
import { isOutputFolder, OUTPUT_MARKER } from '../output-marker.ts';
import { PARALLEL_THRESHOLD, renderParallel } from '../sinks/parallel/render-pool.ts';
import { listFiles, OutputError, patchTree, withMarker, writeTreeAtomically } from '../sinks/atomic-tree.ts';
import { GitopsTreeBuilder } from '../sinks/gitops.ts';
import { checkSetObjects, parentSource, renderedSetProblems, type CheckedSet } from '../validate/prewrite.ts';
import { checkOutputFolder } from '../sinks/output-guard.ts';
import { LabSession } from './lab-session.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { EXIT_INPUT, EXIT_OK, reportOutputError, reportProblems } from './report.ts';
import { inputPaths } from './synth.ts';

interface GitopsOptions {
  file: string[];
  output: string;
  check?: boolean;
  watch?: boolean;
  debounce: string;
  quiet?: boolean;
  jobs: string;
  [key: string]: unknown;
}

export function registerGitops(program: Command): void {
  const cmd = program
    .command('gitops')
    .description('render the input into an Argo CD-ready tree: app of apps, one Application per workspace, tenant and namespace of instances')
    .requiredOption('-f, --file <path...>', 'input files or folders')
    .option('-o, --output <dir>', 'output folder, replaced atomically: missing, empty, or written by crownlabs before (see README)', 'gitops')
    .option('--check', 'write nothing; exit 1 when the folder is not what the input renders to')
    .option('--watch', 'keep running: re-render what an input change affects')
    .option('--debounce <ms>', 'watch mode: wait this long after the last change', '150')
    .option('-q, --quiet', 'do not print warnings')
    .option('-j, --jobs <n>', 'render threads for inputs of 400+ sets without --watch: this one and n-1 workers share the sets (see bench/RESULTS.md)', '1');
  addConfigOptions(cmd).action(async (opts: GitopsOptions) => {
    process.exitCode = await runGitops(opts);
  });
}

export async function runGitops(opts: GitopsOptions): Promise<number> {
  const { config, problems: configProblems } = configFromOptions(opts);
  if (reportProblems(configProblems)) return EXIT_INPUT;
  const out = resolve(opts.output);
  const inputs = inputPaths(opts);
  // Checked before any work (--check only reads it): a refused folder fails fast (OutputError, exit 1).
  if (!opts.check) checkOutputFolder(opts.output, inputs);
  const builder = new GitopsTreeBuilder(config);
  // The tree holds no Secret values: no secret that only shapes them is needed.
  const session = new LabSession(opts.file, config, process.cwd(), { secretValues: false });
  let files: Map<string, string>;
  const jobs = Math.max(1, Number(opts.jobs) || 1);
  if (opts.watch) {
    // Watch mode keeps the parsed input and rendered sets to re-render only what a change affects.
    const bar = progressBar(opts);
    const loaded = session.load(bar ? (done, total) => (done === 1 ? bar.start(total, 1) : bar.update(done)) : undefined);
    bar?.stop();
    if (reportProblems(loaded.problems, opts.quiet)) return EXIT_INPUT;
    files = builder.files(session.renderedSets());
  } else {
    const tree = await renderTree(opts, config, builder, jobs);
    if (tree === 'invalid') return EXIT_INPUT;
    files = tree;
  }

  if (opts.check) {
    const stale = staleFiles(out, withMarker(files));
    if (stale.length === 0) {
      process.stderr.write(`${opts.output} is up to date (${files.size} files)\n`);
      return EXIT_OK;
    }
    // Without the marker, gitops refuses to replace the folder: say so before suggesting it.
    const unmarked = existsSync(out) && !isOutputFolder(out) ? ` (after removing ${opts.output}: it has no ${OUTPUT_MARKER} marker, so crownlabs will not replace it)` : '';
    process.stderr.write(`${opts.output} is stale: ${stale.length} file(s) differ, e.g.\n${stale.slice(0, 20).map((f) => `  ${f}`).join('\n')}\nrun: crownlabs gitops -f ${opts.file.join(' ')} -o ${opts.output}${unmarked}\n`);
    return EXIT_INPUT;
  }

  const result = writeTreeAtomically(opts.output, files, { inputs });
  process.stderr.write(`${files.size} files → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  if (!opts.watch) return EXIT_OK;

  // Watch mode: debounce changes, re-render the affected sets, rewrite only the files that changed.
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  // Read what a one-shot run reads: no dot entries (among them the output's own staging folders,
  // `.<dir>.new-…`) and no folder crownlabs wrote.
  const explicit = new Set(opts.file.flatMap((f) => [f, resolve(f)]));
  const ignored = (p: string) => !explicit.has(p) && (basename(p).startsWith('.') || isOutputFolder(p));
  const watcher = chokidar.watch(opts.file, { ignoreInitial: true, awaitWriteFinish: false, ignored });
  // After a failed write the folder may not hold `files`: the next write is a full one.
  let full = false;
  const flush = () => {
    const changed = [...pending];
    pending.clear();
    const t0 = performance.now();
    try {
      const update = session.update(changed);
      for (const p of update.problems) if (p.severity === 'error' || !opts.quiet) process.stderr.write(`${formatProblem(p)}\n`);
      if (!update.applied) {
        process.stderr.write('watch: invalid input; the last good tree stays\n');
        return;
      }
      const next = builder.files(session.renderedSets());
      let written: number;
      if (full) {
        const r = writeTreeAtomically(opts.output, next, { inputs });
        written = r.written + r.removed;
      } else written = patchTree(opts.output, files, next, { inputs });
      files = next;
      full = false;
      process.stderr.write(`watch: ${update.rerendered.length} set(s) re-rendered, ${written} file(s) changed in ${Math.round(performance.now() - t0)} ms\n`);
    } catch (err) {
      // Keep watching: the folder keeps its last complete tree (a crash-safe write), the next change retries.
      full = true;
      if (err instanceof OutputError) reportOutputError(err);
      else process.stderr.write(`watch: internal error: ${(err as Error).message}\n`);
      process.stderr.write('watch: the last good tree stays\n');
    }
  };
  const onChange = (path: string) => {
    if (!/\.(ya?ml|json)$/.test(path)) return;
    pending.add(path);
    clearTimeout(timer);
    timer = setTimeout(flush, Number(opts.debounce));
  };
  watcher.on('add', onChange).on('change', onChange).on('unlink', onChange);
  await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  process.stderr.write(`watching ${opts.file.join(', ')} (Ctrl-C to stop)\n`);
  await new Promise<void>((done) => {
    const stop = () => {
      void watcher.close().then(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return EXIT_OK;
}

/**
 * A full render without watch mode: sets are rendered one at a time and only their files kept,
 * split over threads for large inputs when asked (-j), with the same validation and composition.
 */
async function renderTree(opts: GitopsOptions, config: ComposerConfig, builder: GitopsTreeBuilder, jobs: number): Promise<Map<string, string> | 'invalid'> {
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize });
  const composition = compose(inventory, config, { secretValues: false });
  if (reportProblems([...problems, ...composition.problems], opts.quiet)) return 'invalid';
  const bar = progressBar(opts);
  let started = false;
  const progress = bar
    ? (done: number, total: number) => {
        if (started) bar.update(done);
        else bar.start(total, done);
        started = true;
      }
    : undefined;
  let files: Map<string, string>;
  const checks: CheckedSet[] = [];
  if (jobs > 1 && composition.units.length >= PARALLEL_THRESHOLD) {
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'gitops', builder, { threads: jobs, onProgress: progress });
    composition.units.forEach((unit, i) => checks.push({ unit, check: out[i].check }));
    files = builder.filesOf(composition.units.map((unit, i) => ({ unit, objectCount: out[i].objectCount })));
  } else {
    // Sets whose inputs, config and code are as last time come from the render cache (src/cache).
    const output = opts.check ? undefined : opts.output;
    const cache = RenderCache.open({ kind: 'gitops', config, inputs: inputPaths(opts), output }, inventory, isGitopsEntry);
    const sets = composition.units.map((unit, i) => {
      let entry = cache?.get(unit);
      if (entry) builder.prime(unit, entry.files);
      else {
        const objects = renderUnit(unit);
        entry = { files: builder.setFilesOf({ unit, objects }), objects: objects.length, check: checkSetObjects(objects) };
        cache?.set(unit, entry);
      }
      checks.push({ unit, check: entry.check });
      progress?.(i + 1, composition.units.length);
      return { unit, objectCount: entry.objects };
    });
    files = builder.filesOf(sets);
    cache?.save();
  }
  bar?.stop();
  // What the API server would refuse, or two inputs rendering one object: nothing is written.
  if (reportProblems(renderedSetProblems(checks, (parent) => parentSource(inventory, parent)), opts.quiet)) return 'invalid';
  return files;
}

/** Files that differ between the folder and what it should hold. */
export function staleFiles(dir: string, files: ReadonlyMap<string, string>): string[] {
  const present = existsSync(dir) && statSync(dir).isDirectory() ? listFiles(dir) : new Set<string>();
  const stale: string[] = [];
  for (const [rel, content] of files) {
    if (!present.has(rel) || readFileSync(join(dir, rel), 'utf8') !== content) stale.push(rel);
  }
  for (const rel of present) if (!files.has(rel)) stale.push(rel);
  return stale.sort();
}

/**
 * A watch update: writes only the files whose content changed and removes those no longer rendered,
 * crash-safe (patchTree). Returns how many files were touched (kept for bench/scenario.ts).
 */
export function applyFileChanges(dir: string, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, inputs: readonly string[] = []): number {
  return patchTree(dir, before, after, { inputs });
}

function progressBar(opts: GitopsOptions): SingleBar | undefined {
  // A bar only for people: not in CI, not when stderr is a pipe.
  if (opts.quiet || process.env.CI || !process.stderr.isTTY) return undefined;
  return new SingleBar({ format: 'rendering {bar} {value}/{total} sets', stream: process.stderr, hideCursor: true }, Presets.shades_classic);
}
