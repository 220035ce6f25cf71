import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { readInputFile, type ReadResult } from '../inputs/input-file.ts';
import { expandInputPaths } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import type { ComposerConfig } from '../config/config.ts';
import { OUTPUT_MARKER, OUTPUT_MARKER_TEXT } from '../output-marker.ts';
import { packageRoot } from '../runtime/package-root.mjs';
import { isStaged, type TreeContent } from '../sinks/atomic-tree.ts';
import { lockPath } from '../sinks/output-lock.ts';
import { BackgroundTreeStats, BACKGROUND_WALK_FROM, treeStats } from '../sinks/tree-stats.ts';
import { codeHash, contentDigest, overlaps, readCacheFile, replaceCacheFile, serialize, type CacheKind } from './render-cache.ts';

/*
 * The run record: what a synth/gitops run into an output folder produced last time, kept so that a
 * re-run on the very same inputs neither parses, composes nor renders anything. Its key is a hash of
 *   - the product (as the render cache's: sources, Node, package-lock.json) and the command;
 *   - the configuration (every key, as loaded);
 *   - the -f paths, the output folder and the working folder (problems name files relative to it);
 *   - every input file's name and content, and the problems of listing them.
 * It holds the warnings the run printed, its summary counts, and the output tree as written: each
 * file's size, mtime, ctime, inode and device (statKey), and a sha256 of its content. The latter let
 * a run that renders leave alone, unread, every file whose stats are still those and whose new
 * content has that digest (unchanged()). A re-run replays only when the key matches and the
 * folder still holds exactly those files with those stats (ctime cannot be set back: any write,
 * rename or chmod since shows), and no crashed writer left anything beside it. Anything else
 * (a missing, truncated or tampered record, an edited or added file) is a miss: the run renders,
 * through the render cache, as always. One file per command, input paths and output folder.
 */

const FORMAT = 'crownlabs-run-record v2';
const RECORD_FILE = /^run-(synth|gitops)-[0-9a-f]{24}\.json$/;

export interface RunSummary {
  /** synth: resource sets; gitops: files (the marker aside). */
  count: number;
  /** synth: objects. */
  objects: number;
}

interface Stored {
  format: string;
  key: string;
  problems: Problem[];
  summary: RunSummary;
  /** Relative path → `<statKey> <sha256 of the content>`. */
  tree: Record<string, string>;
}

export interface RunRecordOptions {
  kind: CacheKind;
  config: ComposerConfig;
  /** The -f paths (no `-`: standard input is never recorded). */
  files: readonly string[];
  /** -f paths and the config file (the cache folder must not overlap them). */
  inputs: readonly string[];
  output: string;
  /** Default: CROWNLABS_CACHE_DIR, else `<package root>/.cache/render`. */
  dir?: string;
  /** Default: the running product's hash. Tests pass their own. */
  codeHash?: string;
  /** From this many files of the last run's tree, a run that renders walks it on a second thread. Default: BACKGROUND_WALK_FROM. */
  backgroundWalkFrom?: number;
  cwd?: string;
}

export class RunRecord {
  private constructor(
    private readonly file: string,
    private readonly key: string,
    private readonly output: string,
    /** The input files as read for the key, by path: a run that renders parses these very texts. */
    readonly texts: ReadonlyMap<string, ReadResult>,
    private readonly stored: Stored | undefined,
    /** The output folder walked on a second thread since open(), for outputState(): a large tree, inputs changed. */
    readonly walked: BackgroundTreeStats | undefined,
  ) {}

  /**
   * The record of this run's inputs, or undefined when there can be none: caching off
   * (CROWNLABS_RENDER_CACHE=0), standard input, a cache folder overlapping an input or the output,
   * or an input that cannot be read (the run reports it).
   */
  static open(opts: RunRecordOptions): RunRecord | undefined {
    if (process.env.CROWNLABS_RENDER_CACHE === '0' || opts.files.includes('-')) return undefined;
    try {
      const dir = resolve(opts.dir ?? (process.env.CROWNLABS_CACHE_DIR || join(packageRoot(), '.cache', 'render')));
      const output = resolve(opts.output);
      if (overlaps(dir, [...opts.inputs, output])) return undefined;
      const cwd = opts.cwd ?? process.cwd();
      const h = createHash('sha256').update(`${FORMAT}\0${opts.kind}\0${opts.codeHash ?? codeHash()}\0`).update(serialize(opts.config));
      h.update(`\0${cwd}\0${output}\0${opts.files.map((f) => resolve(f)).join('\0')}\0`);
      const listed = expandInputPaths(opts.files);
      h.update(JSON.stringify(listed.problems));
      const texts = new Map<string, ReadResult>();
      for (const f of listed.files) {
        const read = readInputFile(f, opts.config.inputMaxFileSize);
        if (!read.ok) return undefined;
        texts.set(f, read);
        h.update(`\0${relative(cwd, f) || f}\0${Buffer.byteLength(read.text)}\0`).update(read.text);
      }
      const key = h.digest('hex');
      const lab = createHash('sha256').update(`${FORMAT}\0${opts.kind}\0${output}\0${opts.files.map((f) => resolve(f)).join('\0')}`).digest('hex').slice(0, 24);
      const file = join(dir, `run-${opts.kind}-${lab}.json`);
      const stored = RunRecord.read(file);
      // Inputs changed: the run renders, and the folder's state (outputState) is needed once the
      // lab is parsed and composed. A large tree is walked on a second thread meanwhile; not beside
      // a crashed writer's leftovers, which the run settles first.
      const walked = stored && stored.key !== key && Object.keys(stored.tree).length >= (opts.backgroundWalkFrom ?? BACKGROUND_WALK_FROM) && !hasLeftovers(output) ? new BackgroundTreeStats(output) : undefined;
      return new RunRecord(file, key, output, texts, stored, walked);
    } catch {
      return undefined;
    }
  }

  /** What the last run with these inputs printed and wrote, when the output folder still holds exactly that. */
  replay(): { problems: Problem[]; summary: RunSummary } | undefined {
    const stored = this.stored;
    if (!stored || stored.key !== this.key) return undefined;
    try {
      // A crashed writer's leftovers beside the folder: the full run settles them.
      if (hasLeftovers(this.output)) return undefined;
      const now = treeStats(this.output);
      const then = stored.tree;
      if (now.size !== Object.keys(then).length) return undefined;
      for (const [rel, st] of now) if (!then[rel]?.startsWith(`${st} `)) return undefined;
    } catch {
      return undefined;
    }
    return { problems: stored.problems, summary: stored.summary };
  }

  /**
   * True when the last run (whatever its inputs) wrote `rel` with content of `digest`, and the folder
   * still holds that very file: `stat` (its statKey now, from outputState()) is the one recorded.
   */
  unchanged(rel: string, digest: string, stat: string | undefined): boolean {
    const then = stat === undefined ? undefined : this.stored?.tree[rel];
    return then !== undefined && then === `${stat} ${digest}`;
  }

  /**
   * Records this run, after it wrote `files` (relative path → content, the marker aside; KEEP: kept
   * as checked by unchanged()). Never throws: a record that cannot be written is none. The folder
   * must hold those paths with those sizes (a file changed meanwhile by someone else is not recorded
   * as ours). `digests`: the contents' digests where known (the others are hashed); `stats`: the
   * tree's statKeys when the write knows them (else the folder is walked).
   */
  save(problems: readonly Problem[], summary: RunSummary, files: ReadonlyMap<string, TreeContent>, digests?: ReadonlyMap<string, string>, stats?: ReadonlyMap<string, string>): void {
    let body: string;
    try {
      stats ??= treeStats(this.output);
      if (stats.size !== files.size + 1 || !stats.has(OUTPUT_MARKER)) return;
      const tree: Record<string, string> = { [OUTPUT_MARKER]: `${stats.get(OUTPUT_MARKER)} ${contentDigest(OUTPUT_MARKER_TEXT)}` };
      for (const [rel, content] of files) {
        const st = stats.get(rel);
        const digest = digests?.get(rel) ?? (typeof content === 'string' ? contentDigest(content) : undefined);
        const bytes = typeof content === 'string' ? Buffer.byteLength(content) : isStaged(content) ? content.stagedBytes : undefined;
        if (st === undefined || digest === undefined || (bytes !== undefined && st.split(' ', 1)[0] !== String(bytes))) return;
        tree[rel] = `${st} ${digest}`;
      }
      body = JSON.stringify({ format: FORMAT, key: this.key, problems: [...problems], summary, tree } satisfies Stored);
    } catch {
      return;
    }
    replaceCacheFile(this.file, body, RECORD_FILE);
  }

  private static read(file: string): Stored | undefined {
    try {
      const body = readCacheFile(file);
      if (body === undefined) return undefined;
      const s = JSON.parse(body) as Stored;
      const ok =
        s.format === FORMAT &&
        typeof s.key === 'string' &&
        Array.isArray(s.problems) &&
        s.problems.every((p) => typeof p === 'object' && p !== null && typeof p.message === 'string' && (p.severity === 'warning' || p.severity === 'error')) &&
        Number.isSafeInteger(s.summary?.count) &&
        Number.isSafeInteger(s.summary?.objects) &&
        typeof s.tree === 'object' &&
        s.tree !== null;
      return ok ? s : undefined;
    } catch {
      return undefined;
    }
  }
}

/** Whether a writer (crashed, or at work) left anything beside output folder `output` (src/sinks/atomic-tree.ts). */
function hasLeftovers(output: string): boolean {
  const prefix = `.${basename(output)}.`;
  // The lock is not a leftover: this very run holds it while it reads the record.
  const lock = basename(lockPath({ parent: dirname(output), base: basename(output) }));
  try {
    return readdirSync(dirname(output)).some((n) => n.startsWith(prefix) && n !== lock);
  } catch {
    // Cannot tell: as if there were (no replay, no early walk).
    return true;
  }
}
