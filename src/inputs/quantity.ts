/**
 * Kubernetes `resource.Quantity`: parsing, exact arithmetic and canonical formatting, with the
 * observable behaviour of Go's `k8s.io/apimachinery/pkg/api/resource` (checked against v0.31.0 by
 * the Go-generated table in test/unit/inputs/fixtures/quantity-go.json).
 *
 * What "the same observable behaviour" covers:
 * - `parseQuantity` accepts and rejects exactly what `resource.ParseQuantity` does (including the
 *   odd inputs Go accepts: `"1."`, `"."`, `"+"`, `"e3"`, `"Ki"`), rounds up to 1n precision like Go,
 *   clamps binary-SI values above 2^63-1, and keeps the three error kinds (`reason`).
 * - `toString()` is byte-identical to Go's `Quantity.String()`: a parsed quantity keeps its input
 *   text when Go keeps it (`"+1"`, `"05"`, `"1.500"`, `"1E3"` print as typed), anything computed is
 *   canonical (`2000m` -> `2`, `1024Mi` -> `1Gi`, `2Gi` + `500M` -> `2647483648`).
 * - `add` keeps the receiver's format (a zero receiver takes the other operand's), like Go, and
 *   `cmp` compares exactly.
 *
 * Only what the composer computes is here: parse, format, add, compare, sign, millicores.
 *
 * Internally a quantity is an exact decimal `unscaled × 10^scale` (BigInt), tagged with which of
 * Go's two representations (int64Amount or inf.Dec) Go would be holding, because the canonical
 * form of -2^63 differs between the two.
 *
 * Known deviations: a value whose parsing would need a power of ten above 10^100000 (e.g.
 * `"1.0000000000000000000e100001"`) is rejected with reason `range` (Go would build the huge number),
 * and one that needs a huge division (`"1e-2000000000"`) is rounded at once (Go grinds through it);
 * arithmetic on quantities whose exponents differ by more than 100000 throws a `RangeError`.
 */

/** The three ways Go renders a quantity. */
export type QuantityFormat = 'DecimalExponent' | 'BinarySI' | 'DecimalSI';

/** What a CRD's int-or-string quantity field may hold. */
export type QuantityInput = string | number | bigint;

/** Anything the helper functions accept as a quantity. */
export type QuantityLike = Quantity | QuantityInput;

/**
 * Why a value is not a quantity: Go's three parse errors (`format` = ErrFormatWrong,
 * `numeric` = ErrNumeric, `suffix` = ErrSuffix), plus `range` (see the module comment) and `type`
 * (neither string nor number).
 */
export type QuantityErrorReason = 'format' | 'numeric' | 'suffix' | 'range' | 'type';

const GO_ERROR_TEXT: Record<QuantityErrorReason, string> = {
  format: "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
  numeric: 'unable to parse numeric part of quantity',
  suffix: "unable to parse quantity's suffix",
  range: 'the exponent is too large to represent',
  type: 'a quantity must be a string or a number',
};

/** Thrown by `parseQuantity` (and everything that parses) on a value that is not a quantity. */
export class QuantityError extends Error {
  override readonly name = 'QuantityError';

  constructor(
    /** The rejected value, as given. */
    readonly input: unknown,
    readonly reason: QuantityErrorReason,
  ) {
    super(`${describeInput(input)} is not a valid Kubernetes quantity: ${GO_ERROR_TEXT[reason]}`);
  }
}

function describeInput(input: unknown): string {
  if (typeof input === 'string') return JSON.stringify(input);
  if (typeof input === 'number' || typeof input === 'bigint') return String(input);
  if (input === null) return 'null';
  return typeof input;
}

// ---------------------------------------------------------------------------------------------
// int64 and power-of-ten helpers

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);
/** Largest power of ten this module builds; beyond it a RangeError (see the module comment). */
const MAX_POW10 = 100_000;

const fitsInt64 = (v: bigint): boolean => v >= INT64_MIN && v <= INT64_MAX;

const POW10_CACHE: bigint[] = [];
for (let i = 0, p = 1n; i <= 40; i++, p *= 10n) POW10_CACHE.push(p);

function pow10(k: number): bigint {
  const cached = POW10_CACHE[k];
  if (cached !== undefined) return cached;
  if (k > MAX_POW10) throw new RangeError(`quantity exponent out of the supported range (10^${k})`);
  return 10n ** BigInt(k);
}

/** Number of decimal digits of |v|. */
const digitCount = (v: bigint): number => (v < 0n ? -v : v).toString().length;

/** base × 10^k (k ≥ 0) if it fits in int64, else undefined. Go's positiveScaleInt64 `ok`. */
function scaleUpFits(base: bigint, k: number): bigint | undefined {
  if (base === 0n || k === 0) return base;
  if (k > 19) return undefined;
  const r = base * pow10(k);
  return fitsInt64(r) ? r : undefined;
}

/** Compare a×10^as with b×10^bs exactly. */
function cmpScaled(a: bigint, as: number, b: bigint, bs: number): -1 | 0 | 1 {
  const sa = a === 0n ? 0 : a > 0n ? 1 : -1;
  const sb = b === 0n ? 0 : b > 0n ? 1 : -1;
  if (sa !== sb) return sa < sb ? -1 : 1;
  if (sa === 0) return 0;
  // Same sign, both non-zero: compare magnitudes by order of magnitude first (no huge powers).
  const ma = digitCount(a) + as;
  const mb = digitCount(b) + bs;
  if (ma !== mb) return (ma > mb) === (sa > 0) ? 1 : -1;
  const s = Math.min(as, bs);
  const x = a * pow10(as - s);
  const y = b * pow10(bs - s);
  return x === y ? 0 : x < y ? -1 : 1;
}

// ---------------------------------------------------------------------------------------------
// suffixes

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9],
  ['u', -6],
  ['m', -3],
  ['', 0],
  ['k', 3],
  ['M', 6],
  ['G', 9],
  ['T', 12],
  ['P', 15],
  ['E', 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10],
  ['Mi', 20],
  ['Gi', 30],
  ['Ti', 40],
  ['Pi', 50],
  ['Ei', 60],
]);
const DECIMAL_SUFFIX_BY_EXPONENT = new Map([...DECIMAL_SUFFIXES].map(([s, e]) => [e, s]));
const BINARY_SUFFIX_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

interface SuffixMeaning {
  base: 2 | 10;
  exponent: number;
  format: QuantityFormat;
}

function interpretSuffix(suffix: string): SuffixMeaning | undefined {
  const dec = DECIMAL_SUFFIXES.get(suffix);
  if (dec !== undefined) return { base: 10, exponent: dec, format: 'DecimalSI' };
  const bin = BINARY_SUFFIXES.get(suffix);
  if (bin !== undefined) return { base: 2, exponent: bin, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E')) {
    // strconv.ParseInt(rest, 10, 64), then Go's int32 conversion (which wraps).
    const rest = suffix.slice(1);
    if (!/^[+-]?[0-9]+$/.test(rest)) return undefined;
    const n = BigInt(rest);
    if (!fitsInt64(n)) return undefined;
    return { base: 10, exponent: Number(BigInt.asIntN(32, n)), format: 'DecimalExponent' };
  }
  return undefined;
}

/** The suffix Go prints for a decimal exponent (none when its table lacks one). */
function decimalSuffix(exponent: number, format: QuantityFormat): string {
  if (format === 'DecimalExponent') return exponent === 0 ? '' : `e${exponent}`;
  return DECIMAL_SUFFIX_BY_EXPONENT.get(exponent) ?? '';
}

// ---------------------------------------------------------------------------------------------
// parsing

interface SplitQuantity {
  positive: boolean;
  /** The signed numeric text (what Go hands to inf.Dec.SetString). */
  value: string;
  /** Integer digits without leading zeros ("0" when there are none). */
  num: string;
  denom: string;
  suffix: string;
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const SUFFIX_CHARS = 'eEinumkKMGTP';

/** Go's parseQuantityString; undefined means ErrFormatWrong. */
function splitQuantity(str: string): SplitQuantity | undefined {
  const end = str.length;
  let positive = true;
  let pos = 0;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') {
    pos++;
  }
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, value: '0', num: '0', denom: '', suffix: '' };

  let i = pos;
  while (i < end && isDigit(str[i])) i++;
  let num = str.slice(pos, i);
  if (i >= end) return { positive, value: str, num, denom: '', suffix: '' };
  pos = i;
  if (num === '') num = '0';

  let denom = '';
  if (str[pos] === '.') {
    pos++;
    let j = pos;
    while (j < end && isDigit(str[j])) j++;
    denom = str.slice(pos, j);
    if (j >= end) return { positive, value: str, num, denom, suffix: '' };
    pos = j;
  }
  const value = str.slice(0, pos);

  const suffixStart = pos;
  let k = pos;
  while (k < end && SUFFIX_CHARS.includes(str[k] as string)) k++;
  if (k >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  pos = k;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos >= end) return { positive, value, num, denom, suffix: str.slice(suffixStart) };
  return undefined;
}

/** inf.Dec.SetString on Go's numeric text: [sign] digits [. digits]; undefined when there is no digit. */
function scanDecimal(text: string): { unscaled: bigint; fractionDigits: number } | undefined {
  let body = text;
  let negative = false;
  if (body[0] === '+' || body[0] === '-') {
    negative = body[0] === '-';
    body = body.slice(1);
  }
  const dot = body.indexOf('.');
  const intPart = dot < 0 ? body : body.slice(0, dot);
  const frac = dot < 0 ? '' : body.slice(dot + 1);
  const digits = intPart + frac;
  if (digits === '') return undefined;
  const magnitude = BigInt(digits);
  return { unscaled: negative ? -magnitude : magnitude, fractionDigits: frac.length };
}

/** Round a non-negative u×10^-infScale up (away from zero) to 9 fractional digits. */
function roundUpToNano(u: bigint, infScale: number): bigint {
  if (infScale <= 9) return u * pow10(9 - infScale);
  const k = infScale - 9;
  if (k > digitCount(u)) return u === 0n ? 0n : 1n;
  const d = pow10(k);
  return u % d === 0n ? u / d : u / d + 1n;
}

interface Parsed {
  format: QuantityFormat;
  big: boolean;
  unscaled: bigint;
  scale: number;
  text?: string;
}

/** Go's ParseQuantity; throws QuantityError. */
function parseGo(str: string, input: unknown): Parsed {
  if (str.length === 0) throw new QuantityError(input, 'format');
  if (str === '0') return { format: 'DecimalSI', big: false, unscaled: 0n, scale: 0, text: str };

  const parts = splitQuantity(str);
  if (parts === undefined) throw new QuantityError(input, 'format');
  const meaning = interpretSuffix(parts.suffix);
  if (meaning === undefined) throw new QuantityError(input, 'suffix');
  const { base, exponent } = meaning;
  let { format } = meaning;
  const { num, denom } = parts;

  // The int64 fast path, with Go's conservative precision estimate deciding when to take it.
  let precision: number;
  let scale = 0;
  let mantissa = 1n;
  if (format === 'BinarySI') {
    if (exponent >= 0 && denom.length === 0) {
      mantissa = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else {
      precision = -1;
    }
  } else {
    scale = exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale = (scale - denom.length) | 0; // int32 arithmetic, as in Go
    if (scale >= -9) {
      const shifted = num + denom;
      const parsed = BigInt(shifted);
      const product = parsed * mantissa;
      if (fitsInt64(parsed) && fitsInt64(product)) {
        const unscaled = parts.positive ? product : -product;
        // Go keeps the input text when it already is what String() would print (roughly).
        const keepText =
          format === 'BinarySI'
            ? exponent % 10 === 0 && (parsed & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        return keepText
          ? { format, big: false, unscaled, scale, text: str }
          : { format, big: false, unscaled, scale };
      }
    }
  }

  // The arbitrary-precision path (Go's inf.Dec).
  const dec = scanDecimal(parts.value);
  if (dec === undefined) throw new QuantityError(input, 'numeric');
  let u = dec.unscaled;
  let infScale = dec.fractionDigits;
  if (base === 10) infScale = (infScale - exponent) | 0;
  else u *= 1n << BigInt(exponent);
  const negative = u < 0n;
  if (negative) u = -u;
  if (u !== 0n) {
    try {
      u = roundUpToNano(u, infScale);
    } catch (e) {
      if (e instanceof RangeError) throw new QuantityError(input, 'range');
      throw e;
    }
    infScale = 9;
  }
  if (format === 'BinarySI' && cmpScaled(u, -infScale, INT64_MAX, 0) > 0) {
    u = INT64_MAX;
    infScale = 0;
  }
  if (format === 'BinarySI' && u !== 0n && cmpScaled(u, -infScale, 1n, 0) < 0) format = 'DecimalSI';
  return { format, big: true, unscaled: negative ? -u : u, scale: -infScale };
}

function inputText(input: QuantityInput): string {
  if (typeof input === 'string') return input;
  if (typeof input === 'bigint') return input.toString();
  if (!Number.isFinite(input)) throw new QuantityError(input, 'format');
  // The shortest round-trip text, as JSON.stringify writes it (and Go's decoder then reads it).
  return String(input);
}

/** An int64 from a safe integer number or an in-range bigint. */
function toInt64(n: number | bigint, what: string): bigint {
  if (typeof n === 'number') {
    if (!Number.isSafeInteger(n)) throw new RangeError(`${what} must be a safe integer, got ${n}`);
    return BigInt(n);
  }
  if (!fitsInt64(n)) throw new RangeError(`${what} must fit in int64, got ${n}`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// the class

/**
 * An immutable Kubernetes quantity. Build one with `parseQuantity`, `Quantity.parse` or
 * `Quantity.fromMilli`; `add` returns a new quantity. `JSON.stringify` writes it as Go's
 * MarshalJSON does (its `toString()`).
 */
export class Quantity {
  private constructor(
    /** How the quantity is printed (Go's `Format` field). */
    readonly format: QuantityFormat,
    /** Whether Go would hold it as an inf.Dec rather than an int64Amount. */
    private readonly big: boolean,
    /** The value is `unscaled × 10^scale`, exactly. */
    private readonly unscaled: bigint,
    private readonly scale: number,
    /** The input text Go's parser keeps (and String() returns) when it is already canonical enough. */
    private readonly text?: string,
  ) {}

  /** Parse a quantity like Go's `resource.ParseQuantity`. Numbers are read as their JSON text. */
  static parse(input: QuantityInput): Quantity {
    if (typeof input !== 'string' && typeof input !== 'number' && typeof input !== 'bigint') {
      throw new QuantityError(input, 'type');
    }
    const p = parseGo(inputText(input), input);
    return new Quantity(p.format, p.big, p.unscaled, p.scale, p.text);
  }

  /** `value` thousandths (Go's `NewMilliQuantity`), e.g. 500 -> `500m`, 2000 -> `2`. */
  static fromMilli(value: number | bigint, format: QuantityFormat = 'DecimalSI'): Quantity {
    return new Quantity(format, false, toInt64(value, 'value'), -3);
  }

  /** Go's `String()`: the kept input text if any, else the canonical form. */
  toString(): string {
    return this.text ?? this.canonical();
  }

  /** Same as `toString()`, so `JSON.stringify` matches Go's MarshalJSON. */
  toJSON(): string {
    return this.toString();
  }

  /**
   * Go's CanonicalizeBytes, ignoring any kept input text: what `String()` prints once the quantity
   * has been computed with. DecimalSI/DecimalExponent use the smallest integer mantissa with an
   * exponent multiple of 3; BinarySI uses powers of 1024 for an integer number of units with
   * |value| ≥ 1024 (plain units when not divisible by 1024), and DecimalSI otherwise.
   */
  canonical(): string {
    const { unscaled, scale } = this;
    if (unscaled === 0n) return '0';
    let format = this.format;
    if (format === 'BinarySI') {
      const small = cmpScaled(unscaled, scale, -1024n, 0) > 0 && cmpScaled(unscaled, scale, 1024n, 0) < 0;
      if (small || (scale < 0 && unscaled % pow10(-scale) !== 0n)) format = 'DecimalSI';
    }
    if (format !== 'BinarySI') {
      let m = unscaled;
      let e = scale;
      while (m % 10n === 0n) {
        m /= 10n;
        e++;
      }
      while (e % 3 !== 0) {
        m *= 10n;
        e--;
      }
      return m.toString() + decimalSuffix(e, format);
    }
    let units = scale >= 0 ? unscaled * pow10(scale) : unscaled / pow10(-scale);
    // Go's int64 factor removal negates first, which leaves -2^63 negative and so untouched.
    if (!this.big && units === INT64_MIN) return units.toString();
    let power = 0;
    while (units % 1024n === 0n) {
      units /= 1024n;
      power++;
    }
    return units.toString() + (BINARY_SUFFIX_BY_POWER[power] ?? '');
  }

  /** The sum, in this quantity's format (the other's when this one is zero), like Go's `Add`. */
  add(other: QuantityLike): Quantity {
    const y = toQuantity(other);
    const format = this.isZero() ? y.format : this.format;
    if (!this.big && !y.big) {
      const r = addInt64Amounts(this.unscaled, this.scale, y.unscaled, y.scale);
      if (r !== undefined) return new Quantity(format, false, r.unscaled, r.scale);
    }
    const s = Math.min(this.scale, y.scale);
    return new Quantity(format, true, this.unscaled * pow10(this.scale - s) + y.unscaled * pow10(y.scale - s), s);
  }

  /** -1, 0 or 1 as this is less than, equal to or greater than `other` (Go's `Cmp`); exact. */
  cmp(other: QuantityLike): -1 | 0 | 1 {
    const y = toQuantity(other);
    return cmpScaled(this.unscaled, this.scale, y.unscaled, y.scale);
  }

  isZero(): boolean {
    return this.unscaled === 0n;
  }

  /** -1, 0 or 1. */
  sign(): -1 | 0 | 1 {
    return this.unscaled === 0n ? 0 : this.unscaled > 0n ? 1 : -1;
  }
}

/** Go's int64Amount.Add: the sum if Go computes it in int64 (no overflow), else undefined. */
function addInt64Amounts(
  a: bigint,
  as: number,
  b: bigint,
  bs: number,
): { unscaled: bigint; scale: number } | undefined {
  if (b === 0n) return { unscaled: a, scale: as };
  if (a === 0n) return { unscaled: b, scale: bs };
  let x = a;
  let y = b;
  let scale = as;
  if (as > bs) {
    const up = scaleUpFits(a, as - bs);
    if (up === undefined) return undefined;
    x = up;
    scale = bs;
  } else if (as < bs) {
    const up = scaleUpFits(b, bs - as);
    if (up === undefined) return undefined;
    y = up;
  }
  const sum = x + y;
  return fitsInt64(sum) ? { unscaled: sum, scale } : undefined;
}

// ---------------------------------------------------------------------------------------------
// helpers for the operators

/** Parse a quantity (string, or a number as found in int-or-string CRD fields); throws QuantityError. */
export function parseQuantity(input: QuantityInput): Quantity {
  return Quantity.parse(input);
}

/** A quantity as is, or parsed. */
function toQuantity(q: QuantityLike): Quantity {
  return q instanceof Quantity ? q : Quantity.parse(q);
}

/** Whether `value` is a string or number that Kubernetes accepts as a quantity. */
export function isQuantity(value: unknown): value is QuantityInput {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'bigint') return false;
  try {
    Quantity.parse(value);
    return true;
  } catch (e) {
    if (e instanceof QuantityError || e instanceof RangeError) return false;
    throw e;
  }
}

/**
 * Whether the amount a quantity's text means is above `limit` base units (bytes, cores), judged
 * before Go's parser clamps a binary-SI value above 2^63-1 to 2^63-1 (so `8Ei`, exactly 2^63
 * bytes, exceeds an int64 limit although it parses). Throws QuantityError on a non-quantity.
 */
export function exceedsAmount(input: QuantityInput, limit: bigint): boolean {
  Quantity.parse(input);
  const parts = splitQuantity(inputText(input))!;
  const meaning = interpretSuffix(parts.suffix)!;
  let unscaled = BigInt((parts.num || '0') + parts.denom);
  let scale = -parts.denom.length;
  if (meaning.base === 2) unscaled <<= BigInt(meaning.exponent);
  else scale += meaning.exponent;
  return cmpScaled(parts.positive ? unscaled : -unscaled, scale, limit, 0) > 0;
}

/** The largest int64: the most bytes (or millicores) Kubernetes holds in a quantity's value. */
export const MAX_INT64 = INT64_MAX;

/** The text Go would write for this quantity (e.g. `"2000m"` -> `"2"`, but a kept input as is). */
export function formatQuantity(q: QuantityLike): string {
  return toQuantity(q).toString();
}

/** a + b in a's format (b's when a is zero), like Go's `a.Add(b)`. */
export function addQuantities(a: QuantityLike, b: QuantityLike): Quantity {
  return toQuantity(a).add(b);
}

/** -1, 0 or 1 (Go's `a.Cmp(b)`). */
export function compareQuantities(a: QuantityLike, b: QuantityLike): -1 | 0 | 1 {
  return toQuantity(a).cmp(b);
}

/** A DecimalSI quantity of `n` thousandths (Go's `NewMilliQuantity(n, DecimalSI)`): 500 -> `500m`, 2000 -> `2`. */
export function millicores(n: number | bigint): Quantity {
  return Quantity.fromMilli(n);
}

