import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { crownlabsCrdsDir, DEFAULT_API_LEVEL, type ApiLevel } from '../inputs/api-level.ts';
import { CROWNLABS_CRD_PREFIX } from '../inputs/crd-schemas.ts';
import { sourceLocator, type ParsedText, type ParseMemo, type SourcedObject } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import type { InputObject } from '../inputs/types.ts';
import { packageRoot } from '../runtime/package-root.mjs';
import { codeHash, overlaps, readCacheFile, replaceCacheFile } from './render-cache.ts';

/*
 * The parse cache: each input file's validated, defaulted objects (as JSON) and problems, so an
 * unchanged file is neither read by js-yaml nor checked by ajv. An entry's key is a hash of the
 * file's name as problems show it and its text; the cache file's header holds the product (the
 * render cache's code hash) and the CrownLabs CRDs the objects were validated and defaulted
 * against. Parsing depends on no configuration key (inputMaxFileSize only decides whether a file is
 * read, before this). Kept: files js-yaml read (no anchors: their objects share nothing) without
 * an error, whose values JSON carries exactly (no infinite or NaN number, no -0). A hit rebuilds
 * each object's source, positions included (parsed again from the text only when a problem needs a
 * line). Anything wrong with the cache file is a miss; one file per lab (its input paths).
 */

const FORMAT = 'crownlabs-parse-cache v3';
const CACHE_FILE = /^parse-[0-9a-f]{24}\.json$/;

interface Entry {
  documents: number;
  /** [document, List item index or -1, object] (inline: one JSON.parse per file, not one more per object). */
  objects: [number, number, unknown][];
  problems: Problem[];
}

export interface ParseCacheOptions {
  /** -f paths and the config file (the cache folder must not overlap them). */
  inputs: readonly string[];
  /** The API level the inputs are validated at (its CRDs are part of the key). */
  level?: ApiLevel;
  /** Default: CROWNLABS_CACHE_DIR, else `<package root>/.cache/render`. */
  dir?: string;
  /** Default: the running product's hash. Tests pass their own. */
  codeHash?: string;
}

export class ParseCache implements ParseMemo {
  private readonly stored = new Map<string, string>();
  private readonly next = new Map<string, string>();
  private dirty = false;
  hits = 0;
  misses = 0;

  private constructor(
    private readonly file: string,
    private readonly product: string,
  ) {
    this.load();
  }

  /** The cache of this run, or undefined when caching is off (CROWNLABS_RENDER_CACHE=0) or cannot be used. */
  static open(opts: ParseCacheOptions): ParseCache | undefined {
    if (process.env.CROWNLABS_RENDER_CACHE === '0') return undefined;
    try {
      const dir = resolve(opts.dir ?? (process.env.CROWNLABS_CACHE_DIR || join(packageRoot(), '.cache', 'render')));
      if (overlaps(dir, opts.inputs)) return undefined;
      const h = createHash('sha256').update(`${FORMAT}\0${opts.codeHash ?? codeHash()}\0`);
      const level = opts.level ?? DEFAULT_API_LEVEL;
      h.update(`${level}\0`);
      const crds = crownlabsCrdsDir(level);
      for (const name of readdirSync(crds).sort()) if (name.startsWith(CROWNLABS_CRD_PREFIX)) h.update(`${name}\0`).update(readFileSync(join(crds, name))).update('\0');
      const lab = createHash('sha256').update(`${FORMAT}\0${opts.inputs.map((p) => resolve(p)).join('\0')}`).digest('hex').slice(0, 24);
      return new ParseCache(join(dir, `parse-${lab}.json`), h.digest('hex'));
    } catch {
      return undefined;
    }
  }

  get(shown: string, text: string): ParsedText | undefined {
    const key = keyOf(shown, text);
    const line = this.stored.get(key);
    if (line !== undefined) {
      const parsed = rebuild(line, shown, text);
      if (parsed) {
        this.hits++;
        this.next.set(key, line);
        return parsed;
      }
    }
    this.misses++;
    return undefined;
  }

  set(shown: string, text: string, parsed: ParsedText): void {
    if (parsed.documents === undefined || parsed.problems.some((p) => p.severity === 'error')) return;
    if (!parsed.objects.every((o) => exact(o.object))) return;
    const entry: Entry = {
      documents: parsed.documents,
      objects: parsed.objects.map((o) => [o.source.document, o.source.item ?? -1, o.object]),
      problems: parsed.problems,
    };
    this.next.set(keyOf(shown, text), JSON.stringify(entry));
    this.dirty = true;
  }

  /** Writes this run's entries (only this run's files), when any changed. Never throws. */
  save(): void {
    if (!this.dirty && this.next.size === this.stored.size) return;
    let body = JSON.stringify({ format: FORMAT, product: this.product });
    for (const [key, line] of this.next) body += `\n${key}\t${line}`;
    replaceCacheFile(this.file, body, CACHE_FILE);
  }

  /** Reads the file: a header line, one `key<TAB>entry` line per input file, the digest line. */
  private load(): void {
    const body = readCacheFile(this.file);
    if (body === undefined) return;
    const lines = body.split('\n');
    try {
      const head = JSON.parse(lines[0]) as { format?: unknown; product?: unknown };
      if (head?.format !== FORMAT || head.product !== this.product) return;
    } catch {
      return;
    }
    for (let i = 1; i < lines.length; i++) {
      const tab = lines[i].indexOf('\t');
      if (tab === 64) this.stored.set(lines[i].slice(0, tab), lines[i].slice(tab + 1));
    }
  }
}

function keyOf(shown: string, text: string): string {
  return createHash('sha256').update(`${shown}\0`).update(text).digest('hex');
}

/** The parse result an entry holds, with sources as parseInputText makes them; undefined when the entry is not one. */
function rebuild(line: string, file: string, text: string): ParsedText | undefined {
  let e: Entry;
  try {
    e = JSON.parse(line) as Entry;
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(e?.documents) || !Array.isArray(e.objects) || !Array.isArray(e.problems)) return undefined;
  if (!e.problems.every((p) => typeof p === 'object' && p !== null && p.severity === 'warning' && typeof p.message === 'string')) return undefined;
  const locator = sourceLocator(text, e.documents);
  const objects: SourcedObject[] = [];
  for (const o of e.objects) {
    if (!Array.isArray(o) || !Number.isSafeInteger(o[0]) || !Number.isSafeInteger(o[1])) return undefined;
    const [document, item, object] = o;
    if (typeof object !== 'object' || object === null || Array.isArray(object)) return undefined;
    const source = item >= 0 ? { file, document, strict: true, locate: locator(document, ['items', item]), item } : { file, document, strict: true, locate: locator(document, []) };
    objects.push({ object: object as InputObject, source });
  }
  return { objects, problems: e.problems, documents: e.documents };
}

/** JSON gives back exactly this value (numbers finite and not -0; plain objects and arrays). */
function exact(v: unknown): boolean {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0);
  if (typeof v !== 'object' || v === null) return typeof v !== 'undefined' && typeof v !== 'function' && typeof v !== 'symbol' && typeof v !== 'bigint';
  if (Array.isArray(v)) return v.every(exact);
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && Object.values(v).every(exact);
}
