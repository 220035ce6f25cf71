/**
 * kubectl's `-l, --selector` syntax (apimachinery's labels.Parse): comma-separated requirements
 * `key`, `!key`, `key=v`, `key==v`, `key!=v`, `key in (a,b)`, `key notin (a,b)`, `key>n`, `key<n`.
 * `!=` and `notin` also match objects without the key, as in Kubernetes. Small enough to keep here:
 * no maintained npm package parses it, and the API server cannot match objects not created yet.
 */

export type LabelMatcher = (labels: Record<string, string> | undefined) => boolean;

const NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

function checkKey(key: string): string {
  const slash = key.lastIndexOf('/');
  const [prefix, name] = slash >= 0 ? [key.slice(0, slash), key.slice(slash + 1)] : ['', key];
  if (slash >= 0 && (!PREFIX.test(prefix) || prefix.length > 253)) throw new Error(`invalid label key "${key}": bad prefix`);
  if (!NAME.test(name)) throw new Error(`invalid label key "${key}"`);
  return key;
}

function checkValue(value: string): string {
  if (!VALUE.test(value) || value.length > 63) throw new Error(`invalid label value "${value}"`);
  return value;
}

/** Splits at the commas that are not inside parentheses. */
function requirements(selector: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of selector) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) throw new Error(`unbalanced ")" in selector "${selector}"`);
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) throw new Error(`unbalanced "(" in selector "${selector}"`);
  out.push(cur.trim());
  return out;
}

/** A matcher for `selector`; throws an Error naming the bad part. An empty selector matches all. */
export function parseLabelSelector(selector: string): LabelMatcher {
  if (selector.trim() === '') return () => true;
  const tests: LabelMatcher[] = requirements(selector).map((req) => {
    if (req === '') throw new Error(`empty requirement in selector "${selector}"`);
    let m: RegExpMatchArray | null;
    if ((m = req.match(/^!\s*([^\s=!<>(),]+)$/))) {
      const key = checkKey(m[1]);
      return (l) => !l || !Object.hasOwn(l, key);
    }
    if ((m = req.match(/^([^\s=!<>(),]+)\s+(in|notin)\s*\(([^()]*)\)$/))) {
      const key = checkKey(m[1]);
      const values = new Set(m[3].split(',').map((v) => checkValue(v.trim())));
      return m[2] === 'in' ? (l) => !!l && Object.hasOwn(l, key) && values.has(l[key]) : (l) => !l || !Object.hasOwn(l, key) || !values.has(l[key]);
    }
    if ((m = req.match(/^([^\s=!<>(),]+)\s*(==|=|!=|<|>)\s*([^\s=!<>(),]*)$/))) {
      const key = checkKey(m[1]);
      const op = m[2];
      if (op === '<' || op === '>') {
        if (!/^-?\d+$/.test(m[3])) throw new Error(`"${req}": ${op} needs an integer`);
        const n = Number(m[3]);
        return (l) => !!l && Object.hasOwn(l, key) && /^-?\d+$/.test(l[key]) && (op === '<' ? Number(l[key]) < n : Number(l[key]) > n);
      }
      const value = checkValue(m[3]);
      return op === '!=' ? (l) => !l || l[key] !== value : (l) => !!l && l[key] === value;
    }
    if ((m = req.match(/^([^\s=!<>(),]+)$/))) {
      const key = checkKey(m[1]);
      return (l) => !!l && Object.hasOwn(l, key);
    }
    throw new Error(`cannot parse "${req}" in selector "${selector}"`);
  });
  return (labels) => tests.every((t) => t(labels));
}
