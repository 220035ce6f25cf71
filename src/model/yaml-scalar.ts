/**
 * Safe YAML scalars for every YAML we write (src/sinks/yaml-emitter.ts, the cloud-init user data
 * of constructs/instance). A string is written plain only when no YAML 1.1 reader (PyYAML, which
 * cloud-init uses; Go's yaml.v2) or 1.2 reader (yaml, js-yaml) can read it as anything else, and
 * double-quoted otherwise, with every character a reader could take for a line break, or refuse,
 * escaped. Tenants write some of these strings (their public keys): a string that a reader splits
 * into more YAML than one scalar lets them add keys to a VM's cloud-init (#14.5).
 */

// A plain scalar may hold these ASCII characters only; anything else is quoted.
const PLAIN_CHARS = /^[A-Za-z0-9_./:=+@$()%,~^?&|*!# -]+$/;
// Indicators that may not start a plain scalar, '=' (YAML 1.1's value key) and '~' (null) included.
const NOT_FIRST = ' -:=@%~,?&|*!#';
// Words YAML 1.1 (yes/no/on/off/y/n) or 1.2 reads as booleans or null.
const SPECIAL_WORDS = /^(?:true|false|yes|no|on|off|y|n|null|~)$/i;
// Anything number-like: decimal, hex, octal, binary, YAML 1.1 sexagesimal; a date; inf/nan; and
// what YAML 1.1 readers take for a float with its digits left out (`.`, `._`, `+.5`, `e5`, `.e5`).
const NUMBER_LIKE =
  /^[-+.]?[0-9][0-9a-fA-F_.:xXoObB+-]*$|^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt ]|$)|^[-+]?\.(?:inf|nan)$|^[-+]?(?:[0-9][0-9_]*)?(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?$/i;

/** True when `s` can be written as a plain scalar and every YAML 1.1 and 1.2 reader reads back `s`. */
export function isPlainSafe(s: string): boolean {
  if (!PLAIN_CHARS.test(s)) return false;
  if (NOT_FIRST.includes(s[0])) return false;
  const last = s[s.length - 1];
  if (last === ' ' || last === ':') return false;
  if (s.includes(': ') || s.includes(' #') || s.includes('  ')) return false;
  // `...` at the start of a line ends a document.
  if (s.startsWith('...')) return false;
  return !SPECIAL_WORDS.test(s) && !NUMBER_LIKE.test(s);
}

// What JSON.stringify leaves raw but a YAML reader must not see raw: DEL and the C1 controls (NEL
// among them), LS and PS (YAML 1.1 line breaks: raw inside quotes they fold to a space), the BOM,
// U+FFFE/U+FFFF and surrogates (pairs are fine raw; a lone one is an error).
const NEEDS_YAML_ESCAPE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]/;
const YAML_ESCAPED = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * `s` as a YAML double-quoted scalar that every YAML 1.1 and 1.2 reader reads back as `s`: JSON's
 * string syntax (all of its escapes are YAML's too), with the characters above escaped as well.
 * Throws on a lone surrogate: no UTF-8 text can hold it, so no reader could get it back.
 */
export function doubleQuoted(s: string): string {
  const json = JSON.stringify(s);
  if (!NEEDS_YAML_ESCAPE.test(s)) return json;
  const lone = LONE_SURROGATE.exec(s);
  if (lone) {
    const code = s.charCodeAt(lone.index).toString(16).toUpperCase();
    throw new YamlScalarError(
      `cannot write the string ${preview(s)} as YAML: it holds a lone UTF-16 surrogate (U+${code} at index ${lone.index}), which no UTF-8 text can carry`,
    );
  }
  return json.replace(YAML_ESCAPED, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `s` plain when that is safe, else double-quoted. */
export function yamlString(s: string): string {
  return isPlainSafe(s) ? s : doubleQuoted(s);
}

/** A string that cannot be written as YAML (it holds a lone surrogate). */
export class YamlScalarError extends Error {
  override name = 'YamlScalarError';
}

/** The string quoted and cut short for a message; JSON shows a lone surrogate as an escape. */
function preview(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 80)}…` : s);
}
