import type { KubeObject } from '../api/types.ts';

/**
 * The one YAML emitter every sink uses, so that their bytes agree.
 *
 * Why not a library: rendered objects are plain JSON data (maps, lists, strings, numbers,
 * booleans), and on them the `yaml` package emits ~3 MB/s and js-yaml ~9 MB/s on this machine
 * (bench/RESULTS.md) — most of a 5,000-instance render. This writer handles that data only, at
 * JSON.stringify-like speed, and sorts map keys on the way (apiVersion, kind, metadata first).
 * Strings are plain only when no YAML 1.1 or 1.2 reader (Go's yaml.v2 included) can take them for
 * anything else; otherwise they are JSON-quoted, which is valid YAML. Tests round-trip every
 * rendered object through two YAML parsers in both schemas.
 */
export function objectToYaml(obj: unknown): string {
  return flat(isMap(obj) ? mapBody(obj, '', true, false) : `${scalar(obj)}\n`);
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
    s += first && firstInline ? `${scalarKey(key)}:` : `${indent}${scalarKey(key)}:`;
    first = false;
    s += entryValue(map[key], indent);
  }
  return s;
}

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

// A plain scalar may hold these characters only; anything else is quoted.
const PLAIN_CHARS = /^[A-Za-z0-9_./:=+@$()%,~^?&|*!# -]+$/;
// Words YAML 1.1 (yes/no/on/off/y/n) or 1.2 reads as booleans or null.
const SPECIAL_WORDS = /^(?:true|false|yes|no|on|off|y|n|null|~)$/i;
// Anything number-like (decimal, hex, octal, binary, YAML 1.1 sexagesimal), date-like or inf/nan.
const NUMBER_LIKE = /^[-+.]?[0-9][0-9a-fA-F_.:xXoObB+-]*$|^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ]|$)|^[-+]?\.(?:inf|nan)$/i;

function plainSafe(s: string): boolean {
  if (!PLAIN_CHARS.test(s)) return false;
  const c = s[0];
  // Indicator characters may not start a plain scalar.
  if (' -:=@%~,?&|*!#'.includes(c)) return false;
  if (s[s.length - 1] === ' ' || s[s.length - 1] === ':') return false;
  if (s.includes(': ') || s.includes(' #') || s.includes('  ')) return false;
  return !SPECIAL_WORDS.test(s) && !NUMBER_LIKE.test(s);
}

// Rendered objects repeat the same strings (label keys and values, names) many times over.
const formatted = new Map<string, string>();
const FORMATTED_CACHE_LIMIT = 100_000;

function formatString(s: string): string {
  let f = formatted.get(s);
  if (f === undefined) {
    f = plainSafe(s) ? s : JSON.stringify(s);
    if (formatted.size >= FORMATTED_CACHE_LIMIT) formatted.clear();
    if (s.length < 256) formatted.set(s, f);
  }
  return f;
}

function scalar(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`cannot write the number ${v} as YAML`);
    return String(v);
  }
  if (typeof v === 'string') return formatString(v);
  throw new Error(`cannot write a ${typeof v} as YAML`);
}

const formattedKeys = new Map<string, string>();

function scalarKey(k: string): string {
  let f = formattedKeys.get(k);
  if (f === undefined) {
    f = plainSafe(k) && !k.includes(' ') ? k : JSON.stringify(k);
    if (formattedKeys.size >= FORMATTED_CACHE_LIMIT) formattedKeys.clear();
    if (k.length < 256) formattedKeys.set(k, f);
  }
  return f;
}
