import type { KubeObject } from '../inputs/types.ts';
import { doubleQuoted, isPlainSafe } from '../model/yaml-scalar.ts';

/**
 * The one YAML emitter every sink uses, so that their bytes agree.
 *
 * Why not a library: rendered objects are plain JSON data (maps, lists, strings, numbers,
 * booleans), and on them the `yaml` package emits ~3 MB/s and js-yaml ~9 MB/s on this machine
 * (bench/RESULTS.md) — most of a 5,000-instance render. This writer handles that data only, at
 * JSON.stringify-like speed, and sorts map keys on the way (apiVersion, kind, metadata first).
 * Strings are plain only when no YAML 1.1 or 1.2 reader (PyYAML and Go's yaml.v2 included) can
 * take them for anything else; otherwise they are double-quoted with every line break and
 * non-printable escaped (src/model/yaml-scalar.ts). Tests round-trip every rendered object, and
 * random ones, through PyYAML, `yaml` (1.1 and 1.2) and js-yaml.
 */
export function objectToYaml(obj: unknown): string {
  if (!isMap(obj)) return `${scalar(obj)}\n`;
  return flat(hasDefinedKey(obj) ? mapBody(obj, '', true, false) : '{}\n');
}

/** Objects as a multi-document YAML stream. */
export function objectsToYaml(objects: readonly KubeObject[]): string {
  let s = '';
  for (const o of objects) s += `---\n${objectToYaml(o)}`;
  return flat(s);
}

// Text is built by string concatenation rather than pieces joined: faster here. V8 keeps a
// concatenation as a tree of its pieces (3-4 times the text's size) until the string is read by
// index, so a finished document is made flat once before it is kept (a gitops tree holds 25,000).
function flat(s: string): string {
  s.charCodeAt(s.length >> 1);
  return s;
}

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Keys whose value is not undefined, sorted; at the top level apiVersion, kind and metadata first. */
function sortedKeys(map: Record<string, unknown>, top: boolean): string[] {
  const keys = Object.keys(map);
  let defined = keys;
  for (let i = 0; i < keys.length; i++) {
    if (map[keys[i]] === undefined) {
      defined = keys.filter((k) => map[k] !== undefined);
      break;
    }
  }
  // Most maps arrive sorted already (objectJson sorts, generated conversions list fields in order).
  for (let i = 1; i < defined.length; i++) {
    if (defined[i - 1] > defined[i]) {
      defined.sort();
      break;
    }
  }
  if (!top) return defined;
  const lead: string[] = [];
  const rest: string[] = [];
  for (const k of defined) (k === 'apiVersion' || k === 'kind' || k === 'metadata' ? lead : rest).push(k);
  lead.sort((a, b) => LEADING_RANK[a] - LEADING_RANK[b]);
  return lead.length === 0 ? rest : lead.concat(rest);
}

const LEADING_RANK: Record<string, number> = { apiVersion: 0, kind: 1, metadata: 2 };

function hasDefinedKey(map: Record<string, unknown>): boolean {
  for (const k in map) if (map[k] !== undefined) return true;
  return false;
}

/** `key: value` lines of a map at `indent`; with firstInline the first line's indent comes from a `- `. */
function mapBody(map: Record<string, unknown>, indent: string, top: boolean, firstInline: boolean): string {
  let s = '';
  let first = true;
  for (const key of sortedKeys(map, top)) {
    const k = scalarKey(key);
    if (!(first && firstInline)) s += indent;
    first = false;
    // Readers refuse an implicit key over 1,024 characters; a longer one is written explicitly.
    s += k.length <= MAX_IMPLICIT_KEY ? `${k}:` : `? ${k}\n${indent}:`;
    s += entryValue(map[key], indent);
  }
  return s;
}

const MAX_IMPLICIT_KEY = 1000;

/** What follows `key:` for a value: ` scalar\n`, ` []\n`, ` {}\n`, or a newline and the nested block. */
function entryValue(value: unknown, indent: string): string {
  if (typeof value === 'object' && value !== null) {
    if (Array.isArray(value)) return value.length === 0 ? ' []\n' : `\n${seq(value, `${indent}  `)}`;
    const map = value as Record<string, unknown>;
    return hasDefinedKey(map) ? `\n${mapBody(map, `${indent}  `, false, false)}` : ' {}\n';
  }
  return ` ${scalar(value)}\n`;
}

function seq(items: unknown[], indent: string): string {
  let s = '';
  for (const item of items) {
    if (typeof item === 'object' && item !== null) {
      if (Array.isArray(item)) s += item.length > 0 ? `${indent}-\n${seq(item, `${indent}  `)}` : `${indent}- []\n`;
      else {
        const map = item as Record<string, unknown>;
        s += hasDefinedKey(map) ? `${indent}- ${mapBody(map, `${indent}  `, false, true)}` : `${indent}- {}\n`;
      }
    } else s += `${indent}- ${scalar(item)}\n`;
  }
  return s;
}

// Rendered objects repeat the same strings (label keys and values, names) many times over.
const formatted = new Map<string, string>();
const FORMATTED_CACHE_LIMIT = 100_000;

function formatString(s: string): string {
  let f = formatted.get(s);
  if (f === undefined) {
    f = isPlainSafe(s) ? s : doubleQuoted(s);
    if (formatted.size >= FORMATTED_CACHE_LIMIT) formatted.clear();
    if (s.length < 256) formatted.set(s, f);
  }
  return f;
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'string') return formatString(v);
  throw new Error(`cannot write a ${typeof v} as YAML`);
}

function formatNumber(v: number): string {
  if (!Number.isFinite(v)) throw new Error(`cannot write the number ${v} as YAML`);
  const s = String(v);
  // YAML 1.1 reads `1e+21` as a string: its floats need a dot (`1.0e+21`).
  if (s.includes('e') && !s.includes('.')) return s.replace('e', '.0e');
  return s;
}

const formattedKeys = new Map<string, string>();

function scalarKey(k: string): string {
  let f = formattedKeys.get(k);
  if (f === undefined) {
    f = isPlainSafe(k) && !k.includes(' ') ? k : doubleQuoted(k);
    if (formattedKeys.size >= FORMATTED_CACHE_LIMIT) formattedKeys.clear();
    if (k.length < 256) formattedKeys.set(k, f);
  }
  return f;
}
