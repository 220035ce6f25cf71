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
  const out: string[] = [];
  if (isMap(obj)) writeMapBody(obj, '', out, true);
  else out.push(`${scalar(obj)}\n`);
  return out.join('');
}

/** Objects as a multi-document YAML stream. */
export function objectsToYaml(objects: readonly KubeObject[]): string {
  let s = '';
  for (const o of objects) s += `---\n${objectToYaml(o)}`;
  return s;
}

const LEADING_KEYS = ['apiVersion', 'kind', 'metadata'];

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sortedKeys(map: Record<string, unknown>, top: boolean): string[] {
  const keys = Object.keys(map).filter((k) => map[k] !== undefined);
  keys.sort();
  if (!top) return keys;
  const lead = LEADING_KEYS.filter((k) => map[k] !== undefined);
  return [...lead, ...keys.filter((k) => !LEADING_KEYS.includes(k))];
}

/** Writes `key: value` lines of a map at `indent`; the first line's indent may be supplied by a `- `. */
function writeMapBody(map: Record<string, unknown>, indent: string, out: string[], top = false, firstInline = false): void {
  let first = true;
  for (const key of sortedKeys(map, top)) {
    const pad = first && firstInline ? '' : indent;
    first = false;
    writeEntry(`${pad}${scalarKey(key)}:`, map[key], indent, out);
  }
}

function writeEntry(head: string, value: unknown, indent: string, out: string[]): void {
  if (Array.isArray(value)) {
    if (value.length === 0) out.push(`${head} []\n`);
    else {
      out.push(`${head}\n`);
      writeSeq(value, `${indent}  `, out);
    }
  } else if (isMap(value)) {
    if (sortedKeys(value, false).length === 0) out.push(`${head} {}\n`);
    else {
      out.push(`${head}\n`);
      writeMapBody(value, `${indent}  `, out);
    }
  } else {
    out.push(`${head} ${scalar(value)}\n`);
  }
}

function writeSeq(items: unknown[], indent: string, out: string[]): void {
  for (const item of items) {
    if (isMap(item) && sortedKeys(item, false).length > 0) {
      out.push(`${indent}- `);
      writeMapBody(item, `${indent}  `, out, false, true);
    } else if (Array.isArray(item) && item.length > 0) {
      out.push(`${indent}-\n`);
      writeSeq(item, `${indent}  `, out);
    } else if (isMap(item)) {
      out.push(`${indent}- {}\n`);
    } else if (Array.isArray(item)) {
      out.push(`${indent}- []\n`);
    } else {
      out.push(`${indent}- ${scalar(item)}\n`);
    }
  }
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

function scalarKey(k: string): string {
  return plainSafe(k) && !k.includes(' ') ? k : JSON.stringify(k);
}
