import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Inventory } from '../inputs/inventory.ts';
import type { RenderUnit } from '../compose/compose.ts';
import { unitId } from '../model/set-id.ts';
import { lookupKeysOf } from '../compose/dependency-index.ts';
import type { ComposerConfig } from '../config/config.ts';
import { parentKey, type ParentRef } from '../model/labels.ts';
import { readOwnCacheFile, writeFileAtomically } from '../cache-file.ts';
import { packageRoot } from '../runtime/package-root.mjs';
import type { SetFiles } from '../sinks/gitops.ts';
import type { SetCheck } from '../compose/prewrite.ts';
import { sourcesHash, SOURCE_DIRS } from '../runtime/bundle.mjs';

/*
 * The render cache: what a command made of each resource set last time (synth: the set's YAML;
 * gitops: its files), reused when nothing the set depends on changed. A set's key is a hash of
 *   - the product: the sources' hash (the bundle's name), Node's version, package-lock.json;
 *   - the configuration (every key, as loaded);
 *   - the set's id and parent, and every input document its composition reads (RenderUnit.dependsOn:
 *     the parent, its Template, Tenant, managers, Namespace, MyDrive Secret…), in full.
 * A set whose composition reported nothing also keeps its dependencies' keys, so that a run can
 * take it without composing it (reuse()). Beside the sets, `extra` values under keys that name
 * what they depend on (gitops: each Application's file, by name, folder, namespace and sync wave).
 * A miss renders through the cdk8s constructs as always. Anything wrong with the cache (missing,
 * unreadable, truncated, tampered, another version, read-only, inside an input or output folder)
 * means "miss": the cache can cost time, never change the output. One file per command, lab and
 * product version, replaced whole by a rename (two processes at once: the last one wins, both whole).
 */

const FORMAT = 'crownlabs-render-cache v5';
/** Cache files kept per folder (other labs, other versions): the least recently written go first. */
const KEEP_FILES = 8;

export type CacheKind = 'synth' | 'gitops';

export interface RenderCacheOptions {
  kind: CacheKind;
  config: ComposerConfig;
  /** -f paths and the config file. */
  inputs: readonly string[];
  /** The output folder (none with --stdout). */
  output?: string;
  /** Default: CROWNLABS_CACHE_DIR, else `<package root>/.cache/render`. */
  dir?: string;
  /** Default: the running product's hash. Tests pass their own. */
  codeHash?: string;
}

/** A value stored per set must pass this check when read back (a tampered entry is a miss). */
export type EntryCheck<V> = (value: unknown) => value is V;

export class RenderCache<V> {
  // `deps`: the set's dependencies, kept when its composition reported nothing (reuse()).
  private readonly stored = new Map<string, { key: string; value: unknown; deps?: readonly string[] }>();
  private readonly next = new Map<string, { key: string; value: V; deps?: readonly string[] }>();
  // Values kept beside the sets (gitops: the Applications' files), by a key that names all they depend on.
  private readonly storedExtras = new Map<string, unknown>();
  private readonly nextExtras = new Map<string, unknown>();
  private readonly docs = new Map<string, unknown>();
  private readonly digests = new Map<string, string>();
  private dirty = false;
  hits = 0;
  misses = 0;

  private constructor(
    private readonly file: string,
    private readonly product: string,
    private readonly kind: CacheKind,
    private readonly check: EntryCheck<V>,
    inventory: Inventory,
  ) {
    // Every key an object answers to (its own, `Workspace/w#managers`, …): a reverse lookup's key
    // hashes all the objects it finds, so a Tenant that becomes a manager changes it.
    for (const obj of inventory.allObjects()) {
      const [own, ...reverse] = lookupKeysOf(obj.kind, obj);
      this.docs.set(own, obj);
      for (const key of reverse) {
        const found = this.docs.get(key) as unknown[] | undefined;
        if (found) found.push(obj);
        else this.docs.set(key, [obj]);
      }
    }
    this.load();
  }

  /**
   * The cache of this command's run, or undefined when caching is off: CROWNLABS_RENDER_CACHE=0,
   * a cache folder that overlaps an input or the output, or a product whose hash is unknown.
   */
  static open<V>(opts: RenderCacheOptions, inventory: Inventory, check: EntryCheck<V>): RenderCache<V> | undefined {
    if (process.env.CROWNLABS_RENDER_CACHE === '0') return undefined;
    try {
      const dir = resolve(opts.dir ?? (process.env.CROWNLABS_CACHE_DIR || join(packageRoot(), '.cache', 'render')));
      if (overlaps(dir, [...opts.inputs, ...(opts.output ? [opts.output] : [])])) return undefined;
      const product = createHash('sha256')
        .update(`${FORMAT}\0${opts.kind}\0${opts.codeHash ?? codeHash()}\0`)
        .update(serialize(opts.config))
        .digest('hex');
      // One file per command, lab (its input paths) and product: labs rendered in turn do not evict each other.
      const lab = createHash('sha256').update(`${product}\0${opts.inputs.map((p) => resolve(p)).join('\0')}`).digest('hex').slice(0, 24);
      return new RenderCache(join(dir, `${opts.kind}-${lab}.json`), product, opts.kind, check, inventory);
    } catch {
      return undefined;
    }
  }

  /**
   * The value stored for this unit, if every input it depends on is as it was. `quiet`: its
   * composition reported no problem, so the next run may reuse it without composing.
   */
  get(unit: RenderUnit, quiet = false): V | undefined {
    const key = this.keyOf(unit);
    const e = this.stored.get(unit.id);
    if (e && e.key === key && this.check(e.value)) {
      this.hits++;
      this.next.set(unit.id, { key, value: e.value, deps: quiet ? unit.dependsOn : undefined });
      if (quiet !== (e.deps !== undefined)) this.dirty = true;
      return e.value;
    }
    this.misses++;
    return undefined;
  }

  set(unit: RenderUnit, value: V, quiet = false): void {
    this.next.set(unit.id, { key: this.keyOf(unit), value, deps: quiet ? unit.dependsOn : undefined });
    this.dirty = true;
  }

  /**
   * The value stored for `parent`'s set when the set can be taken without composing it: its
   * composition reported no problem last time, and every input it looked up then is as it was.
   * Composition is deterministic and reads only through the recorded lookups, so with the same
   * answers to the same lookups it would make the same set again, with the same dependencies.
   */
  reuse(parent: ParentRef): { id: string; value: V } | undefined {
    const id = unitId(parent);
    const e = this.stored.get(id);
    if (!e?.deps || !this.check(e.value)) return undefined;
    const key = this.keyOf({ id, parent, dependsOn: e.deps });
    if (key !== e.key) return undefined;
    this.hits++;
    this.next.set(id, { key, value: e.value, deps: e.deps });
    return { id, value: e.value };
  }

  /** The value kept under `key` by the last run, when it passes `check`; kept for the next run. */
  extra<T>(key: string, check: (v: unknown) => v is T): T | undefined {
    const v = this.storedExtras.get(key);
    if (v === undefined || !check(v)) return undefined;
    this.nextExtras.set(key, v);
    return v;
  }

  /** Keeps `value` under `key`: `key` must name everything the value depends on besides the product and the config. */
  setExtra(key: string, value: unknown): void {
    this.nextExtras.set(key, value);
    this.dirty = true;
  }

  /** The hash of everything the unit's set depends on (besides the product and the config, in the file). */
  keyOf(unit: Pick<RenderUnit, 'id' | 'parent' | 'dependsOn'>): string {
    // One string, one hash: a hash object and four updates per dependency cost more than the hashing (6k sets).
    let text = `${unit.id}\0${parentKey(unit.parent)}\0`;
    for (const dep of unit.dependsOn) text += `${dep}\0${this.docDigest(dep)}\0`;
    return contentDigest(text);
  }

  /** An input document's hash, once per run (a Tenant that manages a workspace is read by all its Instances). */
  private docDigest(key: string): string {
    let d = this.digests.get(key);
    if (d === undefined) {
      d = this.docs.has(key) ? createHash('sha256').update(serialize(this.docs.get(key))).digest('hex') : '-';
      this.digests.set(key, d);
    }
    return d;
  }

  /**
   * Writes this run's entries (only the sets of this run: the file does not grow with old sets), when
   * any changed. Never throws: a cache that cannot be written is no cache. Written in pieces, each
   * hashed as it goes, so memory does not hold a second copy of the whole file.
   */
  save(): void {
    if (!this.dirty && this.next.size === this.stored.size && this.nextExtras.size === this.storedExtras.size) return;
    const tmp = `${this.file}.tmp-${process.pid}-${Date.now()}`;
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      const fd = openSync(tmp, 'wx', 0o600);
      try {
        const hash = createHash('sha256');
        let chunk = `${JSON.stringify({ format: FORMAT, kind: this.kind, product: this.product })}\n`;
        const flush = () => {
          hash.update(chunk);
          writeSync(fd, chunk);
          chunk = '';
        };
        for (const [id, { key, value, deps }] of this.next) {
          chunk += `${JSON.stringify(deps ? [id, key, value, deps] : [id, key, value])}\n`;
          if (chunk.length > 1 << 20) flush();
        }
        for (const [key, value] of this.nextExtras) {
          chunk += `${JSON.stringify([key, value])}\n`;
          if (chunk.length > 1 << 20) flush();
        }
        flush();
        // Last: the digest of everything above (a truncated file has none that matches).
        writeSync(fd, `${hash.digest('hex')}\n`);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, this.file);
      prune(dirname(this.file), this.file, CACHE_FILE);
    } catch {
      try {
        rmSync(tmp, { force: true });
      } catch {
        // The folder cannot be used at all (a file in its place): nothing was left there either.
      }
    }
  }

  /** Reads the file: a header line, one `[id, key, value]` (or `[id, key, value, deps]`) line per set, `[key, value]` per extra, the digest line. */
  private load(): void {
    const buf = readOwnCacheFile(this.file);
    if (!buf) return;
    // Truncated or changed since it was written: no entry is trusted.
    if (buf.length < 66 || buf[buf.length - 1] !== 0x0a) return;
    const end = buf.length - 65;
    if (buf[end - 1] !== 0x0a || buf.toString('latin1', end, buf.length - 1) !== createHash('sha256').update(buf.subarray(0, end)).digest('hex')) return;
    // Line by line from the buffer: the whole file as one string (and its split) would double the peak memory.
    let start = buf.indexOf(0x0a);
    try {
      const head = JSON.parse(buf.toString('utf8', 0, start)) as { format?: unknown; kind?: unknown; product?: unknown };
      if (head?.format !== FORMAT || head.kind !== this.kind || head.product !== this.product) return;
      while (start < end - 1) {
        const next = buf.indexOf(0x0a, start + 1);
        const e = JSON.parse(buf.toString('utf8', start + 1, next)) as unknown;
        start = next;
        if (Array.isArray(e) && e.length === 3 && typeof e[0] === 'string' && typeof e[1] === 'string') this.stored.set(e[0], { key: e[1], value: e[2] });
        else if (Array.isArray(e) && e.length === 4 && typeof e[0] === 'string' && typeof e[1] === 'string' && isStrArray(e[3])) this.stored.set(e[0], { key: e[1], value: e[2], deps: e[3] });
        else if (Array.isArray(e) && e.length === 2 && typeof e[0] === 'string') this.storedExtras.set(e[0], e[1]);
      }
    } catch {
      this.stored.clear();
      this.storedExtras.clear();
    }
  }
}

/** The sha256 of a text, as the caches and the run record keep a file's content and check their own files. */
export function contentDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * JSON with `undefined` kept apart from a missing key, key order kept (a render may depend on it);
 * throws on anything JSON cannot carry faithfully (Map, Set, functions, class instances), so such a
 * config or document turns the cache off instead of hashing two different values alike.
 */
export function serialize(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, v: unknown) {
    if (v === undefined) return { '\0undefined': true };
    if (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') throw new Error('not serializable');
    if (typeof v === 'number' && !Number.isFinite(v)) return { '\0number': String(v) };
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new Error('not serializable');
    }
    return v;
  });
}

let product: string | undefined;

/**
 * The running product's version: the sources' hash (the bundle's file name carries it; from the
 * sources, computed as the bundle does), Node's version, and the dependencies' (package-lock.json).
 */
export function codeHash(): string {
  if (product) return product;
  const root = packageRoot();
  const m = /-([0-9a-f]{16})\.mjs$/.exec(basename(fileURLToPath(import.meta.url)));
  const sources = m ? m[1] : sourcesHash(root, 'render-cache', SOURCE_DIRS);
  let lock = '';
  try {
    lock = contentDigest(readFileSync(join(root, 'package-lock.json'), 'utf8'));
  } catch {
    // No lock file (an install without one): the package.json versions still count.
    lock = contentDigest(readFileSync(join(root, 'package.json'), 'utf8'));
  }
  product = `${sources} ${process.version} ${lock}`;
  return product;
}

/** The cache folder equals, contains or is inside one of `paths` (real paths compared where they exist). */
export function overlaps(dir: string, paths: readonly string[]): boolean {
  const real = (p: string) => {
    // The nearest existing ancestor's real path, plus what is not there yet.
    let cur = resolve(p);
    const rest: string[] = [];
    for (;;) {
      try {
        return join(realpathSync(cur), ...rest);
      } catch {
        const parent = dirname(cur);
        if (parent === cur) return resolve(p);
        rest.unshift(basename(cur));
        cur = parent;
      }
    }
  };
  const d = real(dir);
  return paths.some((p) => {
    const r = real(p);
    return r === d || within(d, r) || within(r, d);
  });
}

function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

const CACHE_FILE = /^(synth|gitops)-[0-9a-f]{24}\.json$/;

/**
 * Replaces a cache file by `body` and a last line with its digest (a truncated or edited file has
 * none that matches: readCacheFile), through a temporary file and a rename (readers see the old
 * file or the new one, whole), then prunes the folder. Never throws: a cache that cannot be written is none.
 */
export function replaceCacheFile(file: string, body: string, pattern: RegExp): void {
  try {
    writeFileAtomically(file, `${body}\n${contentDigest(body)}\n`);
    prune(dirname(file), file, pattern);
  } catch {
    // No cache this time.
  }
}

/** The body replaceCacheFile wrote, when the file is this user's own (readOwnCacheFile) and its digest line matches. */
export function readCacheFile(file: string): string | undefined {
  const text = readOwnCacheFile(file)?.toString('utf8');
  if (text === undefined || !text.endsWith('\n')) return undefined;
  const nl = text.lastIndexOf('\n', text.length - 2);
  if (nl < 0) return undefined;
  const body = text.slice(0, nl);
  return text.slice(nl + 1, -1) === contentDigest(body) ? body : undefined;
}

/** Keeps the newest KEEP_FILES files named like `pattern`; removes temp files of dead writers older than a minute. */
export function prune(dir: string, keep: string, pattern: RegExp): void {
  const files: { path: string; mtime: number }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      const st = statSync(path);
      if (/\.json\.tmp-/.test(name)) {
        if (Date.now() - st.mtimeMs > 60_000) rmSync(path, { force: true });
      } else if (pattern.test(name) && path !== keep) files.push({ path, mtime: st.mtimeMs });
    } catch {
      // Removed meanwhile by another process.
    }
  }
  files.sort((a, b) => b.mtime - a.mtime);
  for (const f of files.slice(KEEP_FILES - 1)) rmSync(f.path, { force: true });
}

const isStr = (v: unknown): v is string => typeof v === 'string';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrArray = (v: unknown): v is string[] => Array.isArray(v) && v.every(isStr);

/** What a set's entry must hold whatever the command: its pre-write check (SetCheck) and object count. */
function isCheckedEntry(v: unknown): v is { objects: number; check: SetCheck } {
  if (!isRecord(v) || !Number.isSafeInteger(v.objects) || (v.objects as number) < 0 || !isRecord(v.check)) return false;
  const { ids, issues } = v.check;
  return isStrArray(ids) && Array.isArray(issues) && issues.every((i) => isRecord(i) && isStr(i.object) && isStr(i.field) && isStr(i.message));
}

/**
 * synth: the sha256 of the set's file, not its text (36 MB at 5k Instances, loaded and rewritten by
 * every run). A hit whose file the output folder still holds as the run record wrote it needs no
 * text; any other hit is rendered again through the constructs.
 */
export interface SynthEntry {
  digest: string;
  objects: number;
  check: SetCheck;
}

export const isSynthEntry = (v: unknown): v is SynthEntry => {
  const digest = isCheckedEntry(v) ? (v as Record<string, unknown>).digest : undefined;
  return isStr(digest) && /^[0-9a-f]{64}$/.test(digest);
};

/**
 * gitops: the set's files (GitopsTreeBuilder.renderedFilesOf) as name and sha256, not their text;
 * as synth's, a file the folder does not hold unchanged has its set rendered again.
 */
export interface GitopsEntry {
  files: SetFiles;
  objects: number;
  check: SetCheck;
}

export const isGitopsEntry = (v: unknown): v is GitopsEntry => {
  if (!isCheckedEntry(v)) return false;
  const f = (v as Record<string, unknown>).files;
  return (
    isRecord(f) &&
    isStrArray(f.expectedSecrets) &&
    isStrArray(f.resources) &&
    Array.isArray(f.files) &&
    f.files.every((e) => Array.isArray(e) && e.length === 2 && isStr(e[0]) && isStr(e[1]) && /^[0-9a-f]{64}$/.test(e[1]))
  );
};

/** gitops: an Application's file name (one path segment) and YAML, as GitopsTreeBuilder renders them. */
export const isApplicationFiles = (v: unknown): v is [string, string] =>
  Array.isArray(v) && v.length === 2 && isStr(v[0]) && /^[A-Za-z0-9][A-Za-z0-9._-]*\.yaml$/.test(v[0]) && isStr(v[1]);
