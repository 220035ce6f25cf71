import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { SingleBar, Presets } from 'cli-progress';
import chokidar from 'chokidar';
import { loadInventory } from '../inputs/load.ts';
import { formatProblem, hasErrors, type Problem } from '../inputs/problems.ts';
import { ParseCache } from '../cache/parse-cache.ts';
import { contentDigest, RenderCache, isApplicationFiles, isGitopsEntry, type GitopsEntry } from '../cache/render-cache.ts';
import { composeReusing, type ReusedSet as ReusedSetOf } from '../cache/reuse.ts';
import type { RunRecord } from '../cache/run-record.ts';
import { compareUnits, compose, renderUnit, type RenderUnit } from '../compose/compose.ts';
import { instanceNameProblems } from '../model/instance-names.ts';
import { parentKey } from '../model/labels.ts';
import type { ComposerConfig } from '../config/config.ts';
import { isOutputFolder, OUTPUT_MARKER } from '../output-marker.ts';
import { PARALLEL_THRESHOLD, renderParallel } from '../sinks/parallel/render-pool.ts';
import { isStaged, KEEP, OutputError, outputState, patchTree, stageNewTree, withMarker, writeTreeAtomically, type TreeContent, type TreeStage } from '../sinks/atomic-tree.ts';
import { GitopsStager, type StageableFile } from '../sinks/gitops-stage.ts';
import { GitopsTreeBuilder, type ApplicationStore, type GitopsSet } from '../sinks/gitops.ts';
import { carryOverSealed } from '../sinks/sealed-carry-over.ts';
import { checkSetObjects, parentSource, renderedSetProblems, type CheckedSet } from '../compose/prewrite.ts';
import { CHECK_EXIT, inputPaths, type GitopsOptions } from './render-options.ts';
import { LabSession } from '../compose/incremental.ts';
import { commandLogger } from './log.ts';
import { EXIT_INPUT, EXIT_OK, reportOutputError, reportProblems, writeStdout } from './report.ts';
import { stdinIfNamed } from './stdin.ts';
import { configFromOptions } from './options.ts';
import { gitopsConfigProblems } from '../sinks/gitops-config.ts';
import { changeCount, DEFAULT_DIFF_LIMITS, statusLines, treeChanges, treeDiff } from './tree-diff.ts';

/** Names of the stale files printed beside the diff; the rest are counted. */
const MAX_NAMED = 100;

/** `gitops` past its checks and a replay (./gitops.ts): parse, compose, render (through the render cache), write or compare, watch. */
export async function renderGitops(opts: GitopsOptions, rerun: string, config: ComposerConfig, inputs: string[], record: RunRecord | undefined): Promise<number> {
  const invalid = opts.check ? CHECK_EXIT.invalid : EXIT_INPUT;
  const out = resolve(opts.output);
  const builder = new GitopsTreeBuilder(config);
  // The tree holds no Secret values: no secret that only shapes them is needed.
  const session = new LabSession(opts.file, config, process.cwd(), { secretValues: false });
  let files: Map<string, TreeContent>;
  // What renderTree knows: the output folder's stats and the files' digests (for KEEP and the run record).
  let known: Omit<RenderedTree, 'files'> = {};
  const jobs = Math.max(1, Number(opts.jobs) || 1);
  const warnings: Problem[] = [];
  if (opts.watch) {
    // Watch mode keeps the parsed input and rendered sets to re-render only what a change affects.
    const bar = progressBar(opts);
    const loaded = session.load(bar ? (done, total) => (done === 1 ? bar.start(total, 1) : bar.update(done)) : undefined);
    bar?.stop();
    if (reportProblems(loaded.problems, opts.quiet)) return EXIT_INPUT;
    files = builder.files(session.renderedSets());
    // The builder keeps each set's files: the objects they came from are not needed again.
    session.releaseObjects();
  } else {
    const tree = await renderTree(opts, config, builder, jobs, warnings, record);
    if (tree === 'invalid') return invalid;
    ({ files, ...known } = tree);
  }

  // Sealed values already in the folder are kept (--check compares with them, too).
  const sealed = withSealedValues(config, out, files);
  files = sealed.files;
  // Files read from the folder with their cached digest equal it (unless carrying sealed values over changed them).
  if (opts.check) return checkFolder(opts, out, withMarker(texts(files)), rerun, config.gitopsSecretMode === 'sealed-secret' ? undefined : known.fromFolder);
  if (sealed.placeholders > 0 && !opts.quiet) {
    process.stderr.write(
      `warning: gitopsSecretMode "sealed-secret": ${sealed.withPlaceholders} SealedSecret(s) hold ${sealed.placeholders} placeholder value(s) (SEAL-ME): the sealed-secrets controller cannot decrypt them until you seal the real values (see SECRETS.md in the tree); sealed values already in ${opts.output} are kept\n`,
    );
  }

  let write: Map<string, TreeContent>;
  let projectChange: string | undefined;
  try {
    projectChange = projectChanged(out, files);
    write = keepUnchanged(files, known, record);
  } catch (err) {
    known.stage?.abort();
    throw err;
  }
  const result = writeTreeAtomically(opts.output, write, { inputs, state: known.state, stage: known.stage });
  record?.save(warnings, { count: files.size, objects: 0 }, write, known.digests, result.stats);
  process.stderr.write(`${files.size} files → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  // Argo CD does not sync root/ (the project would widen itself): whoever runs gitops applies it.
  if (projectChange) process.stderr.write(`note: the AppProject ${projectChange} (the namespaces and kinds the tree deploys) is new or changed: Argo CD does not sync it; review it and apply it, e.g. kubectl apply -f ${join(opts.output, projectChange)}\n`);
  if (!opts.watch) return EXIT_OK;
  return watchInputs(opts, inputs, { session, config, builder, files });
}

/** How long a file's size must stay the same before its change is read (a write in progress is not). */
export const WRITE_STABLE_MS = 100;
/**
 * How long a file that became empty keeps its objects in the tree: `>` and editors truncate a file
 * before they write it again, and a slow writer may take that long to write its first byte.
 */
export const EMPTIED_WAIT_MS = 1000;
/** How often an invalid input is checked for changes no event reported. */
const RECHECK_MS = 1000;

interface WatchState {
  session: LabSession;
  config: ComposerConfig;
  builder: GitopsTreeBuilder;
  /** The tree in the output folder. */
  files: Map<string, TreeContent>;
}

/**
 * Watch mode: debounce changes, re-render from the disk as it is, rewrite only the files that
 * changed. The tree changes only when the whole input (and the configuration) is valid; a failed
 * update keeps the last good tree and its files pending (LabSession), so any later event renders
 * them as they are then. An edit of --config reloads it and renders everything again.
 */
async function watchInputs(opts: GitopsOptions, inputs: string[], start: WatchState): Promise<number> {
  let { session, config, builder, files } = start;
  const out = resolve(opts.output);
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  const configFile = typeof opts.config === 'string' ? resolve(opts.config) : undefined;
  // Set when --config changed, until a load with it succeeds.
  let reload = false;
  // Read what a one-shot run reads: no dot entries (among them the output's own staging folders,
  // `.<dir>.new-…`) and no folder crownlabs wrote.
  const explicit = new Set([...opts.file, ...(configFile ? [configFile] : [])].flatMap((f) => [f, resolve(f)]));
  const ignored = (p: string) => !explicit.has(p) && (basename(p).startsWith('.') || isOutputFolder(p));
  // A change is passed on once the file's size has been stable for WRITE_STABLE_MS (chokidar polls it).
  const watcher = chokidar.watch([...opts.file, ...(configFile ? [configFile] : [])], { ignoreInitial: true, awaitWriteFinish: { stabilityThreshold: WRITE_STABLE_MS, pollInterval: 25 }, ignored });
  // After a failed write the folder may not hold `files`: the next write is a full one.
  let full = false;
  // When each file held now was first seen emptied (EMPTIED_WAIT_MS).
  const emptiedSince = new Map<string, number>();
  // Its status lines are log records, as every long-running command's (JSON, or one line on a
  // terminal); input problems keep the CLI's file:line format, as in a one-shot run.
  const log = commandLogger('gitops');
  const printProblems = (problems: readonly Problem[]) => {
    for (const p of problems) if (p.severity === 'error' || !opts.quiet) process.stderr.write(`${formatProblem(p)}\n`);
  };
  const schedule = (ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(flush, ms);
  };
  /** A new session of the input with the configuration as it is now, or undefined (reported) when either is invalid. */
  const reloaded = (): WatchState | undefined => {
    const { config: next, problems: loaded } = configFromOptions(opts);
    const problems = [...loaded, ...(hasErrors(loaded) ? [] : gitopsConfigProblems(next))];
    printProblems(problems);
    if (hasErrors(problems)) {
      log.warn(`watch: the configuration ${opts.config} is invalid; the last good tree stays`);
      return undefined;
    }
    const s = new LabSession(opts.file, next, process.cwd(), { secretValues: false });
    const r = s.load();
    printProblems(r.problems);
    if (!r.applied) {
      log.warn('watch: invalid input; the last good tree stays (its files are read again with the next change)');
      return undefined;
    }
    log.info(`watch: reloaded the configuration ${opts.config}`);
    return { session: s, config: next, builder: new GitopsTreeBuilder(next), files };
  };
  // While the input is invalid, the disk is checked every RECHECK_MS (stats only): a watcher misses
  // some changes (a broken symbolic link removed), and the fix may be one of them.
  let rechecking: NodeJS.Timeout | undefined;
  const recheck = () => {
    clearInterval(rechecking);
    rechecking = setInterval(() => {
      if (timer === undefined && !reload && session.diskChanged()) schedule(0);
    }, RECHECK_MS);
  };
  const flush = () => {
    timer = undefined;
    clearInterval(rechecking);
    rechecking = undefined;
    const changed = [...pending];
    pending.clear();
    const t0 = performance.now();
    try {
      let sets: number;
      if (reload) {
        const next = reloaded();
        if (!next) return;
        ({ session, config, builder } = next);
        reload = false;
        sets = session.renderedSets().length;
      } else {
        const now = Date.now();
        const emptied = new Set<string>();
        const update = session.update(changed, {
          emptiedMayApply: (f) => {
            emptied.add(f);
            if (!emptiedSince.has(f)) emptiedSince.set(f, now);
            return now - emptiedSince.get(f)! >= EMPTIED_WAIT_MS;
          },
        });
        // A file waits once: it is forgotten when it is no longer emptied (written, or its emptying applied).
        for (const f of [...emptiedSince.keys()]) if (!emptied.has(f) || update.applied) emptiedSince.delete(f);
        if (update.held.length) {
          const wait = Math.min(...update.held.map((f) => emptiedSince.get(f)! + EMPTIED_WAIT_MS - now));
          log.info({ files: update.held }, `watch: ${update.held.join(', ')} became empty; its objects stay ${Math.max(0, wait)} ms more in case it is being written`);
          schedule(Math.max(0, wait));
          return;
        }
        printProblems(update.problems);
        if (!update.applied) {
          log.warn({ pending: session.pendingFiles() }, 'watch: invalid input; the last good tree stays (its files are read again with the next change)');
          recheck();
          return;
        }
        sets = update.rerendered.length;
      }
      const next = withSealedValues(config, out, builder.files(session.renderedSets())).files;
      session.releaseObjects();
      let written: number;
      if (full) {
        const r = writeTreeAtomically(opts.output, next, { inputs });
        written = r.written + r.removed;
      } else written = patchTree(opts.output, texts(files), texts(next), { inputs });
      files = next;
      full = false;
      const ms = Math.round(performance.now() - t0);
      log.info({ sets, files: written, ms }, `watch: ${sets} set(s) re-rendered, ${written} file(s) changed in ${ms} ms`);
    } catch (err) {
      // Keep watching: the folder keeps its last complete tree (a crash-safe write), the next change retries.
      full = true;
      if (err instanceof OutputError) reportOutputError(err);
      else log.error({ err }, 'watch: internal error');
      log.warn('watch: the last good tree stays');
    }
  };
  const onChange = (path: string) => {
    if (configFile !== undefined && resolve(path) === configFile) reload = true;
    else if (!/\.(ya?ml|json)$/.test(path)) return;
    else pending.add(path);
    schedule(Number(opts.debounce));
  };
  watcher.on('add', onChange).on('change', onChange).on('unlink', onChange);
  await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  log.info({ inputs: opts.file }, `watching ${[...opts.file, ...(configFile ? [opts.config as string] : [])].join(', ')} (Ctrl-C to stop)`);
  await new Promise<void>((done) => {
    const stop = () => {
      clearTimeout(timer);
      clearInterval(rechecking);
      void watcher.close().then(done);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  return EXIT_OK;
}

/** A set taken from the render cache without composing it (RenderCache.reuse). */
type ReusedSet = ReusedSetOf<GitopsEntry>;

/**
 * A file of a set: its digest, and its text when rendered in this run (from the render cache: none;
 * `unit` renders it again when needed) until it is staged (a first write: GitopsStager).
 */
interface CachedFile extends StageableFile {
  digest: string;
  /** The set to render again when the folder does not hold the file as written. */
  unit: RenderUnit | ReusedSet;
}

interface RenderedTree {
  /** KEEP only where `state` and the run record show the folder holds the file as it was written. */
  files: Map<string, TreeContent>;
  /** The output folder's files now (outputState), when the run records its output. */
  state?: Map<string, string>;
  /** Digests of the files, where known. */
  digests?: Map<string, string>;
  /** Files whose text was read from the output folder (it had the cached digest). */
  fromFolder?: Set<string>;
  /** A first write of the folder: the files staged while they were rendered (`files` holds them as StagedFiles). */
  stage?: TreeStage;
}

/**
 * A full render without watch mode: sets are rendered one at a time and only their files kept,
 * split over threads for large inputs when asked (-j), with the same validation and composition.
 */
async function renderTree(opts: GitopsOptions, config: ComposerConfig, builder: GitopsTreeBuilder, jobs: number, warnings: Problem[], record: RunRecord | undefined): Promise<RenderedTree | 'invalid'> {
  const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
  // Files parsed as they are now in an earlier run come from the parse cache (src/cache/parse-cache.ts).
  const memo = ParseCache.open({ inputs: inputPaths(opts), level: config.apiLevel });
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize, stdin, memo, texts: record?.texts, level: config.apiLevel });
  memo?.save();
  // Into a folder the run record knows, a set stored as quiet whose inputs are all as they were is
  // taken from the render cache without composing it (RenderCache.reuse), as synth does.
  // (No run record with --check: the cache is opened with the output folder.)
  const cacheOptions = { kind: 'gitops' as const, config, inputs: inputPaths(opts), output: opts.check ? undefined : opts.output };
  const early = jobs === 1 && record ? RenderCache.open(cacheOptions, inventory, isGitopsEntry) : undefined;
  const { composition, reused } = composeReusing(inventory, config, early, { secretValues: false });
  warnings.push(...problems, ...instanceNameProblems(inventory), ...composition.problems);
  if (reportProblems(warnings, opts.quiet)) return 'invalid';
  const bar = progressBar(opts);
  let started = false;
  const progress = bar
    ? (done: number, total: number) => {
        if (started) bar.update(done);
        else bar.start(total, done);
        started = true;
      }
    : undefined;
  let tree: RenderedTree;
  const checks: CheckedSet[] = [];
  if (jobs > 1 && composition.units.length >= PARALLEL_THRESHOLD) {
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'gitops', builder, { threads: jobs, onProgress: progress });
    composition.units.forEach((unit, i) => checks.push({ unit, check: out[i].check }));
    tree = { files: builder.filesOf(composition.units.map((unit, i) => ({ unit, objectCount: out[i].objectCount }))) };
  } else {
    // Sets whose inputs, config and code are as last time come from the render cache (src/cache).
    const cache = early ?? RenderCache.open(cacheOptions, inventory, isGitopsEntry);
    // A cached file the folder holds as the last run wrote it is neither rendered, read nor written.
    const state = cache && record ? outputState(opts.output, { inputs: inputPaths(opts), walked: record.walked }) : undefined;
    // The Applications' files too (they depend on their key, the config and the code only).
    const applications: ApplicationStore | undefined = cache && {
      get: (key) => cache.extra(`Application\0${key}`, isApplicationFiles),
      set: (key, files) => cache.setExtra(`Application\0${key}`, files),
    };
    const cached = new GitopsTreeBuilder<CachedFile>(config, applications);
    const reportedAgain = new Set<string>();
    const quiet = (unit: RenderUnit) => !composition.reported.has(parentKey(unit.parent)) && !reportedAgain.has(parentKey(unit.parent));
    /** A reused set's unit: composed after all, now that its file must be rendered. */
    const composed = (set: RenderUnit | ReusedSet): RenderUnit => {
      if ('build' in set) return set;
      const again = compose(inventory, config, { secretValues: false, parent: set.parent });
      // None expected (its composition reported nothing, and its inputs are the same), but never dropped.
      warnings.push(...again.problems);
      reportProblems(again.problems, opts.quiet);
      for (const key of again.reported) reportedAgain.add(key);
      const unit = again.units.find((u) => u.id === set.id);
      if (!unit) throw new Error(`${set.id}: the set taken from the render cache was not composed again`);
      return unit;
    };
    const render = (set: RenderUnit | ReusedSet): { entry: GitopsEntry; files: [string, CachedFile][] } => {
      const unit = composed(set);
      const objects = renderUnit(unit);
      const sf = cached.renderedFilesOf({ unit, objects });
      const files = sf.files.map(([name, text]): [string, CachedFile] => [name, { digest: contentDigest(text), unit: set, text }]);
      // Under the set the tree holds (a reused set's stand-in, not the unit composed for it).
      cached.prime(set, { ...sf, files });
      const entry = { files: { ...sf, files: files.map(([name, f]): [string, string] => [name, f.digest]) }, objects: objects.length, check: checkSetObjects(objects) };
      cache?.set(unit, entry, quiet(unit));
      return { entry, files };
    };
    const primed = (set: RenderUnit | ReusedSet, entry: GitopsEntry) => cached.prime(set, { ...entry.files, files: entry.files.files.map(([name, digest]) => [name, { digest, unit: set }]) });
    const all: (RenderUnit | ReusedSet)[] = [...composition.units, ...reused];
    all.sort(compareUnits);
    // A first write of the folder: files go to a writer thread as soon as their path is known (not
    // with --check, which writes nothing, nor with sealed secrets, whose values come from the folder).
    const stage = !opts.check && !state && config.gitopsSecretMode !== 'sealed-secret' ? stageNewTree(opts.output, { inputs: inputPaths(opts), files: all.length }) : undefined;
    const stager = stage && new GitopsStager(stage, config.gitopsMaxObjectsPerApp);
    try {
      const sets: GitopsSet[] = all.map((unit, i) => {
        let entry = 'entry' in unit ? unit.entry : cache?.get(unit, quiet(unit));
        let files: [string, CachedFile][] = [];
        if (entry) primed(unit, entry);
        else ({ entry, files } = render(unit));
        checks.push({ unit, check: entry.check });
        progress?.(i + 1, all.length);
        const set = { unit, objectCount: entry.objects };
        stager?.push(set, files);
        return set;
      });
      stager?.flush();
      tree = { ...resolveCached(cached, sets, state, record, opts.output, render), stage };
      cache?.save();
    } catch (err) {
      stage?.abort();
      throw err;
    }
  }
  bar?.stop();
  // What the API server would refuse, or two inputs rendering one object: nothing is written.
  const setProblems = renderedSetProblems(checks, (parent) => parentSource(inventory, parent));
  warnings.push(...setProblems);
  if (reportProblems(setProblems, opts.quiet)) {
    tree.stage?.abort();
    return 'invalid';
  }
  return tree;
}

/**
 * The tree with each cached file (a digest) as KEEP where the folder holds it as the last run wrote
 * it, else its text read from the folder when that has the digest (--check, a lost run record),
 * else its set rendered again through the constructs (the render cache holds no text).
 */
function resolveCached(builder: GitopsTreeBuilder<CachedFile>, sets: readonly GitopsSet[], state: Map<string, string> | undefined, record: RunRecord | undefined, output: string, render: (unit: RenderUnit | ReusedSet) => unknown): Omit<RenderedTree, 'stage'> {
  for (;;) {
    // filesOf's own new map, its values replaced in place (no second map of 25k files).
    const files = builder.filesOf(sets) as Map<string, TreeContent | CachedFile>;
    const digests = new Map<string, string>();
    const fromFolder = new Set<string>();
    const again = new Set<RenderUnit | ReusedSet>();
    for (const [rel, content] of files) {
      if (typeof content === 'string' || content === KEEP || isStaged(content)) continue;
      if (content.staged) {
        // Staged where the tree has it; anywhere else its text is gone, so its set renders again.
        if (content.staged.rel !== rel) again.add(content.unit);
        else {
          files.set(rel, content.staged.file);
          digests.set(rel, content.digest);
        }
      } else if (content.text !== undefined) {
        files.set(rel, content.text);
        digests.set(rel, content.digest);
      } else if (state && record?.unchanged(rel, content.digest, state.get(rel))) {
        files.set(rel, KEEP);
        digests.set(rel, content.digest);
      } else {
        const text = folderText(output, rel, content.digest);
        if (text === undefined) again.add(content.unit);
        else {
          files.set(rel, text);
          digests.set(rel, content.digest);
          fromFolder.add(rel);
        }
      }
    }
    // Rendered again, a set's files are texts: the next pass ends.
    if (again.size === 0) return { files: files as Map<string, TreeContent>, state, digests, fromFolder };
    for (const unit of again) render(unit);
  }
}

/** The folder's file `rel` when its content has `digest`. */
function folderText(output: string, rel: string, digest: string): string | undefined {
  try {
    const text = readFileSync(join(output, rel), 'utf8');
    return contentDigest(text) === digest ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Text files made KEEP too (in place) where the folder holds them as the last run wrote them (run record: stats and digest). */
function keepUnchanged(files: Map<string, TreeContent>, known: Omit<RenderedTree, 'files'>, record: RunRecord | undefined): Map<string, TreeContent> {
  const { state, digests } = known;
  if (!record || !state || !digests) return files;
  for (const [rel, content] of files) {
    if (typeof content !== 'string') continue;
    const digest = digests.get(rel) ?? contentDigest(content);
    digests.set(rel, digest);
    if (record.unchanged(rel, digest, state.get(rel))) files.set(rel, KEEP);
  }
  return files;
}

/** The tree's texts (check, watch and sealed-secret runs have no run record, so no KEEP). */
function texts(files: ReadonlyMap<string, TreeContent>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [rel, content] of files) {
    if (typeof content !== 'string') throw new Error(`${rel}: kept in the folder or staged, its text is not here`);
    out.set(rel, content);
  }
  return out;
}

/** The tree with the sealed values of the folder's SealedSecrets carried over (sealed-secret mode only). */
function withSealedValues(config: ComposerConfig, out: string, files: Map<string, TreeContent>): { files: Map<string, TreeContent>; placeholders: number; withPlaceholders: number } {
  if (config.gitopsSecretMode !== 'sealed-secret') return { files, placeholders: 0, withPlaceholders: 0 };
  return carryOverSealed(out, texts(files));
}

/** The AppProject's path when the tree changes it (written before or not). */
function projectChanged(out: string, files: ReadonlyMap<string, TreeContent>): string | undefined {
  for (const [rel, content] of files) {
    if (!rel.startsWith('root/AppProject_')) continue;
    if (content === KEEP) return undefined;
    const path = join(out, rel);
    const before = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    return before === content ? undefined : rel;
  }
  return undefined;
}

/** --check: the diff on stdout; the summary, the names and the command that updates the folder on stderr. */
async function checkFolder(opts: GitopsOptions, out: string, files: ReadonlyMap<string, string>, rerun: string, same?: ReadonlySet<string>): Promise<number> {
  let changes;
  try {
    changes = treeChanges(out, files, same);
  } catch (err) {
    process.stderr.write(`${opts.output}: error: cannot read: ${(err as Error).message}\nnothing compared\n`);
    return CHECK_EXIT.invalid;
  }
  const stale = changeCount(changes);
  if (stale === 0) {
    process.stderr.write(`${opts.output} is up to date (${files.size} files)\n`);
    return CHECK_EXIT.upToDate;
  }
  let diff;
  try {
    diff = await treeDiff(out, files, changes, opts.fullDiff ? undefined : DEFAULT_DIFF_LIMITS);
  } catch (err) {
    diff = { text: '', shown: 0, error: (err as Error).message };
  }
  if (diff.text && (await writeStdout(diff.text)) !== EXIT_OK) return CHECK_EXIT.invalid;
  const status = statusLines(changes);
  const named = status.slice(0, MAX_NAMED).map((l) => `  ${l}`);
  if (status.length > MAX_NAMED) named.push(`  … and ${status.length - MAX_NAMED} more`);
  // Without the marker, gitops refuses to replace the folder: say so before suggesting it.
  const unmarked = existsSync(out) && !isOutputFolder(out) ? `first remove ${opts.output}: it has no ${OUTPUT_MARKER} marker, so crownlabs will not replace it; then ` : '';
  const lines = [
    `${opts.output} is stale: ${stale} file(s) differ (${changes.changed.length} changed, ${changes.added.length} added, ${changes.deleted.length} deleted; M changed, A added, D deleted):`,
    ...named,
  ];
  if (diff.error) lines.push(`no content diff: ${diff.error}`);
  else if (diff.shown < stale) lines.push(`the diff on stdout shows ${diff.shown} of the ${stale} files, at most ${DEFAULT_DIFF_LIMITS.lines} lines each (--full-diff shows all)`);
  lines.push(`${unmarked}run: ${rerun}`);
  process.stderr.write(`${lines.join('\n')}\n`);
  return CHECK_EXIT.stale;
}

function progressBar(opts: GitopsOptions): SingleBar | undefined {
  // A bar only for people: not in CI, not when stderr is a pipe.
  if (opts.quiet || process.env.CI || !process.stderr.isTTY) return undefined;
  return new SingleBar({ format: 'rendering {bar} {value}/{total} sets', stream: process.stderr, hideCursor: true }, Presets.shades_classic);
}
