/**
 * Table-driven equivalents of the `toJson_*` conversions that `cdk8s import` generates (here those
 * of cdk8s-plus-27's k8s module, which most rendered objects go through). Each generated function
 * builds an object holding every field of its type, lists its entries and re-spreads the result
 * once per defined field: after the constructs themselves, the largest share of a render's time
 * and garbage (bench/RESULTS.md). Their source has one field per line in a few shapes; this reads
 * those shapes into a table once per type and converts by the table — the same keys in the same
 * order, the same values. A function of any other shape (or reaching one) is not compiled, and the
 * caller keeps the generated one; test/unit/compose/generated-conversion.test.ts holds them equal.
 */

export type Conversion = (obj: any) => any;
type Transform = (value: any) => unknown;
type Namespace = Record<string, unknown>;

interface Field {
  json: string;
  ts: string;
  /** undefined: the value as it is. */
  transform?: Transform;
}

const HEADER = ['if (obj === undefined) {', 'return undefined;', '}', 'const result = {'];
const FOOTER = ['};', '// filter undefined values', 'return Object.entries(result).reduce((r, i) => (i[1] === undefined) ? r : ({ ...r, [i[0]]: i[1] }), {});', '}'];
const FIELD_LINE = /^'([^'\\]+)': (.+?),$/;
const MAP_FIELD = /^\(\(obj\.(\w+)\) === undefined\) \? undefined : \(Object\.entries\(obj\.(\w+)\)\.reduce\(\(r, i\) => \(i\[1\] === undefined\) \? r : \(\{ \.\.\.r, \[i\[0\]\]: (.+) \}\), \{\}\)\)$/;

/** A field's shape, read from its line: the TypeScript name and how its value is converted. */
type Shape = { ts: string; kind: 'plain' | 'arrayCopy' | 'value' | 'iso' } | { ts: string; kind: 'nested' | 'array'; fn: string } | { ts: string; kind: 'map'; inner: InnerShape };
type InnerShape = { kind: 'plain' | 'value' | 'arrayCopy' } | { kind: 'nested'; fn: string };
type FieldLine = { json: string; shape: Shape };

function fieldShape(expr: string): Shape | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^obj\.(\w+)$/.exec(expr))) return { ts: m[1], kind: 'plain' };
  if ((m = /^(toJson_\w+)\(obj\.(\w+)\)$/.exec(expr))) return { ts: m[2], kind: 'nested', fn: m[1] };
  if ((m = /^obj\.(\w+)\?\.map\(y => (toJson_\w+)\(y\)\)$/.exec(expr))) return { ts: m[1], kind: 'array', fn: m[2] };
  if ((m = /^obj\.(\w+)\?\.map\(y => y\)$/.exec(expr))) return { ts: m[1], kind: 'arrayCopy' };
  if ((m = /^obj\.(\w+)\?\.value$/.exec(expr))) return { ts: m[1], kind: 'value' };
  if ((m = /^obj\.(\w+)\?\.toISOString\(\)$/.exec(expr))) return { ts: m[1], kind: 'iso' };
  if ((m = MAP_FIELD.exec(expr)) && m[1] === m[2]) {
    const inner = m[3];
    if (inner === 'i[1]') return { ts: m[1], kind: 'map', inner: { kind: 'plain' } };
    if (inner === 'i[1]?.value') return { ts: m[1], kind: 'map', inner: { kind: 'value' } };
    if (inner === 'i[1]?.map(y => y)') return { ts: m[1], kind: 'map', inner: { kind: 'arrayCopy' } };
    const n = /^(toJson_\w+)\(i\[1\]\)$/.exec(inner);
    if (n) return { ts: m[1], kind: 'map', inner: { kind: 'nested', fn: n[1] } };
  }
  return undefined;
}

/** The field lines of a generated conversion named `name`, or undefined when its shape is not the known one. */
function parse(name: string, fn: unknown): FieldLine[] | undefined {
  if (typeof fn !== 'function') return undefined;
  const lines = String(fn)
    .split('\n')
    .map((l) => l.trim().replace(/\s+/g, ' '))
    .filter((l) => l !== '');
  if (lines[0] !== `function ${name}(obj) {`) return undefined;
  if (HEADER.some((l, i) => lines[1 + i] !== l) || FOOTER.some((l, i) => lines[lines.length - FOOTER.length + i] !== l)) return undefined;
  const fields: FieldLine[] = [];
  for (const line of lines.slice(1 + HEADER.length, lines.length - FOOTER.length)) {
    const m = FIELD_LINE.exec(line);
    const shape = m && fieldShape(m[2]);
    if (!m || !shape) return undefined;
    fields.push({ json: m[1], shape });
  }
  return fields;
}

// A map key may be "__proto__" (a ConfigMap's data, say): spread made it an own property, so must we.
function put(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

const compiled = new WeakMap<Namespace, Map<string, Conversion | null>>();

/**
 * The conversion equal to `ns[name]` (a generated `toJson_*` function of the module `ns`), or
 * undefined when it, or a conversion it calls, is not of the known shape.
 */
export function compiledConversion(ns: Namespace, name: string): Conversion | undefined {
  let memo = compiled.get(ns);
  if (!memo) compiled.set(ns, (memo = new Map()));
  const known = memo.get(name);
  if (known !== undefined) return known ?? undefined;

  // Every conversion reachable from `name`, parsed; any unknown shape fails them all.
  const tables = new Map<string, FieldLine[]>();
  const pending = [name];
  while (pending.length > 0) {
    const fn = pending.pop()!;
    if (tables.has(fn)) continue;
    if (memo.get(fn) === null) return fail(memo, name);
    const fields = parse(fn, ns[fn]);
    if (!fields) {
      memo.set(fn, null);
      return fail(memo, name);
    }
    tables.set(fn, fields);
    for (const { shape } of fields) {
      if (shape.kind === 'nested' || shape.kind === 'array') pending.push(shape.fn);
      else if (shape.kind === 'map' && shape.inner.kind === 'nested') pending.push(shape.inner.fn);
    }
  }

  // Converters refer to each other by name (types can be recursive): resolved at call time.
  const ref = (fn: string): Conversion => memo.get(fn) ?? ((obj) => (memo.get(fn) as Conversion)(obj));
  for (const [fn, table] of tables) {
    if (memo.get(fn)) continue;
    const fields: Field[] = table.map(({ json, shape }) => ({ json, ts: shape.ts, transform: transformOf(shape, ref) }));
    memo.set(fn, (obj) => {
      if (obj === undefined) return undefined;
      const out: Record<string, unknown> = {};
      for (const f of fields) {
        const raw = obj[f.ts];
        const v = f.transform ? f.transform(raw) : raw;
        if (v !== undefined) out[f.json] = v;
      }
      return out;
    });
  }
  return memo.get(name) ?? undefined;
}

function fail(memo: Map<string, Conversion | null>, name: string): undefined {
  memo.set(name, null);
  return undefined;
}

function transformOf(shape: Shape, ref: (fn: string) => Conversion): Transform | undefined {
  switch (shape.kind) {
    case 'plain':
      return undefined;
    case 'nested':
      return ref(shape.fn);
    case 'array': {
      const conv = ref(shape.fn);
      return (v) => (v == null ? undefined : v.map((y: unknown) => conv(y)));
    }
    case 'arrayCopy':
      return (v) => (v == null ? undefined : v.map((y: unknown) => y));
    case 'value':
      return (v) => (v == null ? undefined : v.value);
    case 'iso':
      return (v) => (v == null ? undefined : v.toISOString());
    case 'map': {
      const inner = shape.inner;
      const each: Transform = inner.kind === 'nested' ? ref(inner.fn) : inner.kind === 'value' ? (x) => x?.value : inner.kind === 'arrayCopy' ? (x) => x?.map((y: unknown) => y) : (x) => x;
      return (v) => {
        if (v === undefined) return undefined;
        const out: Record<string, unknown> = {};
        for (const [k, x] of Object.entries(v)) if (x !== undefined) put(out, k, each(x));
        return out;
      };
    }
  }
}
