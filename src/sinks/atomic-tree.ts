import { accessSync, constants, copyFileSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isOutputFolder, OUTPUT_MARKER, OUTPUT_MARKER_TEXT } from '../output-marker.ts';
import { checkOutputFile, checkOutputFolder, makeParents, OutputError, type OutputTarget } from './output-guard.ts';
import { statKey } from '../stat-key.ts';
import { treeStats, type BackgroundTreeStats } from './tree-stats.ts';
import { ParallelFileWriter, parallelWritesFrom } from './parallel/file-writer.ts';
import { alive, clearStaleLock, holdOutputLock, withOutputLock } from './output-lock.ts';

export { OutputError } from './output-guard.ts';

export interface TreeWriteResult {
  written: number;
  unchanged: number;
  removed: number;
  /** The tree's statKeys after an in-place update (marker included); after a swap, undefined (walk it). */
  stats?: Map<string, string>;
}

export interface TreeWriteOptions {
  /** Input paths and the config file: the output must not overlap them. */
  inputs?: readonly string[];
  /**
   * The folder as outputState() found it. Given, the write may update the folder in place (see
   * below) and files may be KEEP; files whose statKey is in it are not listed or walked again.
   */
  state?: ReadonlyMap<string, string>;
  /** The tree staged while it was rendered (stageNewTree): completed and swapped in. */
  stage?: TreeStage;
}

/**
 * A new tree staged while it is rendered: each file given to add() is written by a writer thread
 * while the caller renders the next ones (src/sinks/parallel/file-writer.ts). writeTreeAtomically
 * with `{ stage }` completes it (files that differ from those added are written again, extra ones
 * removed) and swaps it in; abort() removes it. Nothing is visible in the folder before the swap.
 */
export interface TreeStage {
  /** What `files` holds for the file in the write that completes the stage. */
  add(rel: string, content: string): StagedFile;
  /** Removes the staged files (a no-op once the tree is written). */
  abort(): void;
}

/**
 * A file of the tree the folder holds already, as the caller proved from outputState()'s stats (e.g.
 * the same statKey as the run that wrote it, with the same content digest): neither read nor written.
 */
export const KEEP: unique symbol = Symbol('keep');
/** A file given to a TreeStage: its text went to the writer thread and is not kept here (`stagedBytes`: its size). */
export interface StagedFile {
  readonly stagedBytes: number;
}
export type TreeContent = string | typeof KEEP | StagedFile;

export function isStaged(content: unknown): content is StagedFile {
  return typeof content === 'object' && content !== null && 'stagedBytes' in content;
}

/**
 * Updates this small (files written + removed, at most max(IN_PLACE_MIN, tree / IN_PLACE_DIVISOR))
 * are applied in place, as a journaled patch; larger ones rebuild the tree beside the folder.
 */
const IN_PLACE_MIN = 64;
const IN_PLACE_DIVISOR = 4;

/*
 * How a crash at any instant stays recoverable. Every step leaves a sibling of DIR named
 * `.DIR.<kind>-<pid>-<time>-<seq>`, which the next write of DIR (any process) settles first once
 * that pid is gone:
 *   new    a full tree being built; complete once the marker is in it (written last)
 *   old    DIR moved aside just before the complete `new` takes its place
 *   patch  a watch update: the changed files, then the journal (written last) of what to move
 *          in and remove
 *   tmp    a single output file (manifests -o) before its rename
 * Settling: if DIR is missing (a crash between the two renames), the newest complete `new` becomes
 * DIR, else the newest `old`; complete patches are rolled forward; everything else is deleted.
 */
type LeftoverKind = 'new' | 'old' | 'patch' | 'tmp';
const PATCH_JOURNAL = '.crownlabs-patch';
let seq = 0;

/**
 * Replaces folder `dir` with exactly `files` (relative path → content) plus the marker. Without
 * `opts.state`, or for a large change, a reader never sees half a tree: the new tree is built beside
 * it and swapped in with renames. Files whose content did not change are hard-linked from the old
 * tree (same inode and mtime), so tools that watch the folder, and git, see only real changes. With
 * `opts.state` and a small change, only the changed files are staged beside it, then a journal, then
 * they are renamed in one by one (each file is old or new, whole; a reader may see some of each for
 * the time of those renames). If anything fails before the swap or the journal, `dir` is untouched;
 * a crash is settled by the next write (see above). Refuses, with an OutputError, any folder
 * checkOutputFolder refuses.
 */
export function writeTreeAtomically(dir: string, files: ReadonlyMap<string, TreeContent>, opts: TreeWriteOptions = {}): TreeWriteResult {
  const stage = opts.stage as StagedTree | undefined;
  if (stage) {
    try {
      return failuresAsOutputErrors(stage.target, () =>
        withOutputLock(stage.target, () => {
          settleLeftovers(stage.target, stage.path);
          return remembered(stage.target, swapIn(stage.target, files, undefined, stage));
        }),
      );
    } finally {
      stage.abort();
    }
  }
  const target = checkOutputFolder(dir, opts.inputs);
  return failuresAsOutputErrors(target, () => {
    makeParents(target);
    return withOutputLock(target, () => {
      settleLeftovers(target);
      const state = opts.state && isOutputFolder(target.path) ? opts.state : undefined;
      if (!state) {
        for (const content of files.values()) if (content === KEEP) throw new Error('a file to keep without the folder state it was checked against');
        return remembered(target, swapIn(target, files));
      }
      return remembered(target, updateInPlace(target, files, state));
    });
  });
}

/**
 * Takes the lock of output folder `dir` for a whole run (src/sinks/output-lock.ts): what the run
 * reads of the folder and what it writes then come from one writer. The returned release also
 * removes the parent folders it had to create for the lock, when the run left them empty.
 */
export function holdOutputFolder(dir: string, inputs: readonly string[] = []): () => void {
  const target = checkOutputFolder(dir, inputs);
  return failuresAsOutputErrors(target, () => {
    const created = makeParents(target);
    let release: () => void;
    try {
      release = holdOutputLock(target);
    } catch (err) {
      removeEmptyFolders(created);
      throw err;
    }
    return () => {
      release();
      removeEmptyFolders(created);
    };
  });
}

function removeEmptyFolders(outermostFirst: readonly string[]): void {
  for (const f of [...outermostFirst].reverse()) {
    try {
      rmdirSync(f);
    } catch {
      return; // not empty: the run wrote into it
    }
  }
}

/**
 * Settles what crashed writers left beside output folder `dir`, then returns the statKey of each
 * file in it (marker included): what writeTreeAtomically's `state` and KEEP entries are checked
 * against. Undefined when `dir` is not an output folder yet or holds anything but files and
 * non-empty folders (the write then rebuilds it whole). Refuses what writeTreeAtomically refuses.
 */
export function outputState(dir: string, opts: Pick<TreeWriteOptions, 'inputs'> & { walked?: BackgroundTreeStats } = {}): Map<string, string> | undefined {
  const target = checkOutputFolder(dir, opts.inputs);
  return failuresAsOutputErrors(target, () => {
    if (!existsSync(target.parent)) return undefined;
    return withOutputLock(target, () => {
      const settled = settleLeftovers(target);
      if (!isOutputFolder(target.path)) return undefined;
      // `walked`: the folder walked since the run began; not if settling changed it meanwhile.
      const early = opts.walked?.dir === target.path && !settled ? opts.walked : undefined;
      try {
        return early ? early.result() : treeStats(target.path);
      } catch {
        return undefined;
      }
    });
  });
}

/**
 * A TreeStage for a first write of output folder `dir` (it does not exist yet) of about `files`
 * files; undefined when the folder exists (the write compares with it and links what is unchanged)
 * or the tree is too small for a writer thread to pay off (CROWNLABS_PARALLEL_WRITES). Refuses
 * what writeTreeAtomically refuses.
 */
export function stageNewTree(dir: string, opts: Pick<TreeWriteOptions, 'inputs'> & { files: number }): TreeStage | undefined {
  const from = parallelWritesFrom();
  if (from === 0 || opts.files < from) return undefined;
  const target = checkOutputFolder(dir, opts.inputs);
  return failuresAsOutputErrors(target, () => {
    makeParents(target);
    // Held by the run (its front took it): the stage is swapped in under the same lock.
    return withOutputLock(target, () => {
      settleLeftovers(target);
      if (existsSync(target.path)) return undefined;
      const path = leftoverPath(target, 'new');
      mkdirSync(path);
      try {
        return new StagedTree(target, path);
      } catch {
        // No writer thread to be had (resource limits): the write goes on one thread, as without a stage.
        rmSync(path, { recursive: true, force: true });
        return undefined;
      }
    });
  });
}

class StagedTree implements TreeStage {
  readonly writer = new ParallelFileWriter();
  /** Files added, by relative path. */
  readonly added = new Map<string, StagedFile>();
  private done = false;
  constructor(
    readonly target: OutputTarget,
    readonly path: string,
  ) {}

  add(rel: string, content: string): StagedFile {
    this.writer.queue(join(this.path, checkedRel(rel)), content);
    const file = { stagedBytes: Buffer.byteLength(content) };
    this.added.set(rel, file);
    return file;
  }

  abort(): void {
    if (this.done) return;
    this.done = true;
    // The worker's last batches are written first, so that nothing recreates the folder after its removal.
    this.writer.abort();
    rmSync(this.path, { recursive: true, force: true });
  }

  /** Called once the tree is swapped in: nothing left to remove. */
  installed(): void {
    this.done = true;
  }
}

/**
 * A watch update of a folder that holds `before`: only the files that differ are written, staged
 * beside it with a journal and then moved in, so unchanged files keep their inode and a large tree
 * is not rebuilt. A crash after the journal is written is rolled forward by the next write. Falls
 * back to a full write when the folder is gone. Returns how many files were written or removed.
 */
export function patchTree(dir: string, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, opts: TreeWriteOptions = {}): number {
  const target = checkOutputFolder(dir, opts.inputs);
  return failuresAsOutputErrors(target, () => {
    makeParents(target);
    return withOutputLock(target, () => {
      settleLeftovers(target);
      // Written by someone else since this process wrote it (another run, a crashed patch rolled
      // forward): `before` is not what it holds, so the whole tree is compared and written.
      if (!isOutputFolder(target.path) || left.get(target.path) !== folderIdentity(target.path)) {
        const r = remembered(target, swapIn(target, after));
        return r.written + r.removed;
      }
      const write = [...after].filter(([rel, content]) => before.get(rel) !== content);
      const remove = [...before.keys()].filter((rel) => !after.has(rel));
      if (write.length === 0 && remove.length === 0) return 0;
      if (!writable(target.path, [...write.map(([rel]) => rel), ...remove])) {
        const r = remembered(target, swapIn(target, after));
        return r.written + r.removed;
      }
      patch(target, write, remove);
      remembered(target, undefined);
      return write.length + remove.length;
    });
  });
}

/** Stages `write`, then the journal, then moves them in and removes `remove` (see LeftoverKind). */
function patch(target: OutputTarget, write: readonly [string, string][], remove: readonly string[]): void {
  const staging = leftoverPath(target, 'patch');
  mkdirSync(staging);
  try {
    const made = new Set<string>([staging]);
    write.forEach(([rel, content], i) => {
      const file = join(staging, checkedRel(rel));
      if (!made.has(dirname(file))) {
        mkdirSync(dirname(file), { recursive: true });
        made.add(dirname(file));
      }
      writeFileSync(file, content);
      if (i === write.length >> 1) faultPoint('patch-stage');
    });
    writeFileSync(join(staging, PATCH_JOURNAL), JSON.stringify({ write: write.map(([rel]) => rel), remove }));
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  faultPoint('patch-staged');
  applyPatch(staging, target.path);
  faultPoint('patch-applied');
  rmSync(staging, { recursive: true, force: true });
}

/**
 * A write into an output folder whose files' stats are `state`: files kept or equal stay untouched,
 * a small change is patched in, a large one rebuilds the tree (swapIn).
 */
function updateInPlace(target: OutputTarget, files: ReadonlyMap<string, TreeContent>, state: ReadonlyMap<string, string>): TreeWriteResult {
  const dir = target.path;
  const write: [string, string][] = [];
  const same = new Set<string>();
  for (const [rel, content] of files) {
    if (isStaged(content)) throw new Error(`${rel}: a staged file without its stage`);
    if (content === KEEP) {
      if (!state.has(rel)) throw new Error(`${rel}: a file to keep that the folder does not hold`);
      same.add(rel);
    } else if (state.get(rel)?.split(' ', 1)[0] === String(Buffer.byteLength(content)) && sameContent(join(dir, checkedRel(rel)), content)) same.add(rel);
    else write.push([rel, content]);
  }
  const remove = [...state.keys()].filter((rel) => rel !== OUTPUT_MARKER && !files.has(rel));
  const changes = write.length + remove.length;
  // A file added by hand under a name a journal cannot carry (the journal's own, a backslash…) goes with a rebuild.
  const journaled = remove.every((rel) => {
    try {
      return checkedRel(rel) === rel;
    } catch {
      return false;
    }
  });
  const tooLarge = changes > Math.max(IN_PLACE_MIN, files.size / IN_PLACE_DIVISOR);
  // A folder the patch cannot rename into (read-only) is rebuilt beside it instead: a swap needs only the parent writable.
  if (!journaled || !sameContent(join(dir, OUTPUT_MARKER), OUTPUT_MARKER_TEXT) || tooLarge || (changes > 0 && !writable(dir, [...write.map(([rel]) => rel), ...remove]))) {
    return swapIn(target, files, { old: new Set([...state.keys()].filter((rel) => rel !== OUTPUT_MARKER)), same });
  }
  const stats = new Map(state);
  if (changes > 0) {
    patch(target, write, remove);
    for (const rel of remove) stats.delete(rel);
    for (const [rel] of write) stats.set(rel, statKey(statSync(join(dir, rel))));
  }
  return { written: write.length, unchanged: same.size, removed: remove.length, stats };
}

/** Same rules for one file (`manifests -o`): `header` + `content` written beside it, then renamed over it. */
export function writeFileAtomically(file: string, header: string, content: string, opts: TreeWriteOptions = {}): void {
  const target = checkOutputFile(file, header, opts.inputs);
  failuresAsOutputErrors(target, () => {
    makeParents(target);
    withOutputLock(target, () => {
      settleLeftovers(target);
      const tmp = leftoverPath(target, 'tmp');
      try {
        writeFileSync(tmp, header + content, { flag: 'wx' });
        faultPoint('file-staged');
        renameSync(tmp, target.path);
      } catch (err) {
        rmSync(tmp, { force: true });
        throw err;
      }
    });
  });
}

/** The tree as written, marker included (what `gitops --check` compares). */
export function withMarker(files: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...files, [OUTPUT_MARKER, OUTPUT_MARKER_TEXT]]);
}

/** Relative paths of the regular files below `dir`. */
export function listFiles(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(r);
      else if (entry.isFile()) out.add(r);
    }
  };
  walk('');
  return out;
}

/**
 * Settles what crashed writers of `target` left beside it (see above). Leftovers of a live process
 * (another writer at work) are left alone; this process's own are settled (its writes are synchronous),
 * but for `staging`, the tree it is staging now (stageNewTree). True when there was any to settle.
 */
export function settleLeftovers(target: OutputTarget, staging?: string): boolean {
  clearStaleLock(target);
  const mine = leftovers(target).filter((l) => l.path !== staging && (l.pid === process.pid || !alive(l.pid)));
  if (mine.length === 0) return false;
  const take = (l: Leftover) => mine.splice(mine.indexOf(l), 1);
  if (!existsSync(target.path)) {
    const newest = (kind: LeftoverKind, ok: (l: Leftover) => boolean) => mine.filter((l) => l.kind === kind && ok(l)).sort(byStamp).pop();
    const restore = newest('new', (l) => isOutputFolder(l.path)) ?? newest('old', (l) => lstatSync(l.path).isDirectory());
    if (restore) {
      renameSync(restore.path, target.path);
      take(restore);
    }
  }
  if (isOutputFolder(target.path)) {
    for (const l of mine.filter((x) => x.kind === 'patch').sort(byStamp)) {
      if (existsSync(join(l.path, PATCH_JOURNAL))) applyPatch(l.path, target.path);
    }
  }
  for (const l of mine) removeLeftover(l.path);
  return true;
}

/**
 * Removes a settled leftover or the tree a swap retired. It is not part of the output: a folder
 * that cannot be removed (made read-only) is a warning naming it, not a failed run.
 */
function removeLeftover(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch (err) {
    process.stderr.write(`warning: ${path}: cannot be removed (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}): the output is complete without it; remove it by hand (chmod -R u+w '${path}' && rm -rf '${path}')\n`);
  }
}

/**
 * Builds the whole tree beside the folder and swaps it in. `known`, when the folder was compared
 * already: its files (marker aside) and those of `files` it holds as they are.
 */
function swapIn(target: OutputTarget, files: ReadonlyMap<string, TreeContent>, known?: { old: Set<string>; same: Set<string> }, stage?: StagedTree): TreeWriteResult {
  const dir = target.path;
  const exists = existsSync(dir);
  const old = known?.old ?? (exists ? listFiles(dir) : new Set<string>());
  old.delete(OUTPUT_MARKER);
  // Nothing to change (a re-render of an unchanged input): nothing is written, so nothing can break.
  if (!known && !stage && exists && holdsExactly(dir, old, files)) return { written: 0, unchanged: files.size, removed: 0 };
  const staging = stage?.path ?? leftoverPath(target, 'new');
  const result: TreeWriteResult = { written: 0, unchanged: 0, removed: 0 };
  if (!stage) mkdirSync(staging);
  // Folders made so far: a recursive mkdir of an existing folder still costs syscalls, per file.
  const made = new Set<string>([staging]);
  // Staged files whose content is not the one added: written once the writer is done with them.
  const rewrite: [string, string][] = [];
  try {
    let i = 0;
    for (const [rel, content] of files) {
      const file = join(staging, checkedRel(rel));
      const parent = dirname(file);
      if (isStaged(content)) {
        if (stage?.added.get(rel) !== content) throw new Error(`${rel}: a staged file this write did not stage`);
        result.written++;
      } else if (stage?.added.has(rel)) {
        if (content === KEEP) throw new Error(`${rel}: a file to keep in a tree staged as new`);
        rewrite.push([file, content]);
        result.written++;
      } else {
        if (!made.has(parent)) {
          mkdirSync(parent, { recursive: true });
          made.add(parent);
        }
        const previous = join(dir, rel);
        if (content === KEEP || known?.same.has(rel)) {
          // Compared already (KEEP: by the caller, against the folder's stats): linked, or copied across file systems.
          if (!tryLink(previous, file)) copyFileSync(previous, file);
          result.unchanged++;
        } else if (!known && old.has(rel) && sameContent(previous, content) && tryLink(previous, file)) result.unchanged++;
        else {
          // Beside a stage, its writer takes them too (finish() shares them out).
          if (stage) stage.writer.queue(file, content);
          else writeFileSync(file, content);
          result.written++;
        }
      }
      if (++i === files.size >> 1) faultPoint('stage');
    }
    stage?.writer.finish();
    for (const [file, content] of rewrite) writeFileSync(file, content);
    for (const rel of stage?.added.keys() ?? []) {
      if (files.has(rel)) continue;
      rmSync(join(staging, rel), { force: true });
      removeEmptyParents(staging, rel);
    }
    for (const rel of old) if (!files.has(rel)) result.removed++;
    // Last: a staging folder holding the marker is complete (settleLeftovers relies on it).
    writeFileSync(join(staging, OUTPUT_MARKER), OUTPUT_MARKER_TEXT);
  } catch (err) {
    // The writer first (its last batches written), so that nothing recreates the folder.
    stage?.writer.abort();
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  faultPoint('staged');
  const retired = leftoverPath(target, 'old');
  try {
    if (exists) {
      renameSync(dir, retired);
      faultPoint('after-retire');
    }
    renameSync(staging, dir);
  } catch (err) {
    // A rename failed (another writer got there first?): put the old tree back, drop the new one.
    if (exists && !existsSync(dir) && existsSync(retired)) renameSync(retired, dir);
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  stage?.installed();
  faultPoint('after-install');
  removeLeftover(retired);
  return result;
}

/** Moves a complete patch's staged files into `dir` and removes what it lists; idempotent (a moved file is no longer staged). */
function applyPatch(staging: string, dir: string): void {
  const journal = JSON.parse(readFileSync(join(staging, PATCH_JOURNAL), 'utf8')) as { write: string[]; remove: string[] };
  // Removals first: a path may turn from a file into a folder or back.
  for (const rel of journal.remove) {
    rmSync(join(dir, checkedRel(rel)), { force: true });
    removeEmptyParents(dir, rel);
  }
  journal.write.forEach((rel, i) => {
    const from = join(staging, checkedRel(rel));
    if (!existsSync(from)) return;
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    renameSync(from, join(dir, rel));
    if (i === (journal.write.length - 1) >> 1) faultPoint('patch-apply');
  });
  // Its ctime changes (it cannot be set back): how a writer tells that another one patched the folder.
  const now = new Date();
  utimesSync(dir, now, now);
}

/**
 * Per output folder, its identity (inode and ctime) when this process last wrote it: a swap gives
 * it a new inode, a patch a new ctime, so any other writer since shows.
 */
const left = new Map<string, string>();

function folderIdentity(dir: string): string | undefined {
  try {
    const st = statSync(dir);
    return `${st.ino} ${st.ctimeMs}`;
  } catch {
    return undefined;
  }
}

function remembered<T>(target: OutputTarget, result: T): T {
  const id = folderIdentity(target.path);
  if (id === undefined) left.delete(target.path);
  else left.set(target.path, id);
  return result;
}

/** Every existing folder a patch of `rels` renames into or removes from is writable. */
function writable(dir: string, rels: readonly string[]): boolean {
  const folders = new Set<string>([dir]);
  for (const rel of rels) {
    const parts = rel.split('/').slice(0, -1);
    for (let i = 0; i <= parts.length; i++) folders.add(join(dir, ...parts.slice(0, i)));
  }
  for (const f of folders) {
    try {
      accessSync(f, constants.W_OK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
  }
  return true;
}

function removeEmptyParents(dir: string, rel: string): void {
  const parts = rel.split('/').slice(0, -1);
  while (parts.length > 0) {
    const p = join(dir, ...parts);
    try {
      // rmdirSync removes a folder only when it is empty (rmSync without `recursive` refuses every folder: EISDIR).
      rmdirSync(p);
    } catch {
      return;
    }
    parts.pop();
  }
}

interface Leftover {
  path: string;
  kind: LeftoverKind;
  pid: number;
  stamp: number[];
}

function leftoverPath(target: OutputTarget, kind: LeftoverKind): string {
  return join(target.parent, `.${target.base}.${kind}-${process.pid}-${Date.now()}-${seq++}`);
}

function leftovers(target: OutputTarget): Leftover[] {
  const prefix = `.${target.base}.`;
  const out: Leftover[] = [];
  for (const name of readdirSync(target.parent)) {
    if (!name.startsWith(prefix)) continue;
    // Without the sequence number: left by versions before the marker, settled the same way.
    const m = /^(new|old|patch|tmp)-(\d+)-(\d+)(?:-(\d+))?$/.exec(name.slice(prefix.length));
    if (m) out.push({ path: join(target.parent, name), kind: m[1] as LeftoverKind, pid: Number(m[2]), stamp: [Number(m[3]), Number(m[4] ?? 0)] });
  }
  return out;
}

function byStamp(a: Leftover, b: Leftover): number {
  return a.stamp[0] - b.stamp[0] || a.stamp[1] - b.stamp[1];
}

/** A path of the tree: relative, `/`-separated, no `.`/`..`/empty segment, not the marker. */
function checkedRel(rel: string): string {
  const parts = rel.split('/');
  if (rel === OUTPUT_MARKER || rel === PATCH_JOURNAL || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\') || p.includes('\0'))) {
    throw new Error(`refusing to write the path ${JSON.stringify(rel)} into an output folder`);
  }
  return rel;
}

/** `dir` is a complete output folder holding exactly `files` (`old`: its files but the marker). */
function holdsExactly(dir: string, old: ReadonlySet<string>, files: ReadonlyMap<string, TreeContent>): boolean {
  if (old.size !== files.size || !sameContent(join(dir, OUTPUT_MARKER), OUTPUT_MARKER_TEXT)) return false;
  for (const [rel, content] of files) if (typeof content !== 'string' || !old.has(rel) || !sameContent(join(dir, checkedRel(rel)), content)) return false;
  return true;
}

function tryLink(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch {
    return false; // another file system (DIR a mount point) or no hard links: the content is written instead
  }
}

function sameContent(path: string, content: string): boolean {
  try {
    return statSync(path).size === Buffer.byteLength(content) && readFileSync(path, 'utf8') === content;
  } catch {
    return false;
  }
}

/** File-system failures become OutputErrors naming the output (exit 1, no stack trace). */
function failuresAsOutputErrors<T>(target: OutputTarget, write: () => T): T {
  try {
    return write();
  } catch (err) {
    if (err instanceof OutputError || !(err as NodeJS.ErrnoException).code) throw err;
    throw new OutputError(target.given, `cannot be written: ${(err as Error).message}${permissionHint(target, err as NodeJS.ErrnoException)}`);
  }
}

/** What to do about a refused write: which folder must be writable, or that the file system is read-only. */
function permissionHint(target: OutputTarget, err: NodeJS.ErrnoException): string {
  const at = err.path ?? target.path;
  if (err.code === 'EROFS') return `. ${at} is on a read-only file system: choose an output (-o) on a writable one`;
  if (err.code !== 'EACCES' && err.code !== 'EPERM') return '';
  return `. crownlabs writes the output beside it and renames it in, so this user needs write access to ${target.parent} and to the output folder: fix the permissions (e.g. chmod u+w), or choose another output (-o)`;
}

/** Test hook: CROWNLABS_FAULT=<point> kills the process there, as a crash would (test/unit/sinks/crash.test.ts). */
function faultPoint(point: string): void {
  if (process.env.CROWNLABS_FAULT === point) process.kill(process.pid, 'SIGKILL');
}
