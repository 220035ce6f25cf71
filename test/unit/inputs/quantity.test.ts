import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  Quantity,
  QuantityError,
  addQuantities,
  compareQuantities,
  formatQuantity,
  isQuantity,
  millicores,
  parseQuantity,
  type QuantityFormat,
} from '../../../src/inputs/quantity.ts';

// The expected values in this table come from Go: k8s.io/apimachinery v0.31.0's
// pkg/api/resource, run by a throwaway program (see the fixture's "about" field for how). The
// table also holds Go's int64 results (Value, MilliValue, Sub, Mul, …): the composer computes
// none of them, so only what src/ uses (parse, String, canonical form, Add, Cmp, NewMilliQuantity)
// is checked against it.
interface GoTable {
  goModule: string;
  parse: Array<{
    in: string;
    err?: string;
    str?: string;
    format?: QuantityFormat;
    value?: string;
    milli?: string;
    nano?: string;
    kilo?: string;
    canon?: string;
    neg?: string;
  }>;
  binary: Array<{
    a: string;
    b: string;
    add: string;
    addFormat: QuantityFormat;
    addValue: string;
    addMilli: string;
    sub: string;
    subFormat: QuantityFormat;
    subValue: string;
    cmp: number;
  }>;
  mul: Array<{ a: string; n: string; str: string; format: QuantityFormat; value: string; milli: string }>;
  ctor: Array<{ ctor: 'quantity' | 'milli' | 'scaled'; n: string; format: QuantityFormat; scale: number; str: string }>;
  chain: Array<{ terms: string[]; str: string; value: string }>;
}

// int64 values (results and the operands `n`) are decimal strings, so none passes through a JS number.
const table = JSON.parse(readFileSync(new URL('./fixtures/quantity-go.json', import.meta.url), 'utf8')) as GoTable;

describe('parse, String, Value (Go table)', () => {
  const ok = table.parse.filter((c) => c.err === undefined);
  const bad = table.parse.filter((c) => c.err !== undefined);

  it('covers a large table', () => {
    expect(table.goModule).toBe('k8s.io/apimachinery@v0.31.0');
    expect(ok.length).toBeGreaterThan(600);
    expect(bad.length).toBeGreaterThan(40);
  });

  it.each(ok)('$in -> $str', (c) => {
    const q = parseQuantity(c.in);
    expect(q.toString()).toBe(c.str);
    expect(q.format).toBe(c.format);
    expect(q.canonical()).toBe(c.canon);
    expect(JSON.stringify(q)).toBe(JSON.stringify(c.str));
    expect(isQuantity(c.in)).toBe(true);
  });

  it.each(bad)('rejects $in ($err)', (c) => {
    let error: unknown;
    try {
      parseQuantity(c.in);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(QuantityError);
    expect((error as QuantityError).reason).toBe(c.err);
    expect(isQuantity(c.in)).toBe(false);
  });
});

describe('Add, Cmp (Go table)', () => {
  const byA = new Map<string, GoTable['binary']>();
  for (const c of table.binary) byA.set(c.a, [...(byA.get(c.a) ?? []), c]);

  it.each([...byA.keys()])('%s with every other operand', (a) => {
    for (const c of byA.get(a) ?? []) {
      const x = parseQuantity(c.a);
      const y = parseQuantity(c.b);
      const sum = x.add(y);
      const label = `${c.a} ? ${c.b}`;
      expect([label, sum.toString(), sum.format]).toEqual([label, c.add, c.addFormat]);
      expect([label, x.cmp(y)]).toEqual([label, c.cmp]);
    }
  });
});

describe('NewMilliQuantity, chained Add (Go table)', () => {
  const milli = table.ctor.filter((c) => c.ctor === 'milli');

  it('covers the millicores constructor in every format', () => {
    expect(new Set(milli.map((c) => c.format)).size).toBe(3);
  });

  it.each(milli)('fromMilli($n, $format) -> $str', (c) => {
    expect(Quantity.fromMilli(BigInt(c.n), c.format).toString()).toBe(c.str);
  });

  it.each(table.chain)('sum of $terms -> $str', (c) => {
    const [first, ...rest] = c.terms;
    let q = parseQuantity(first as string);
    for (const t of rest) q = q.add(t);
    expect(q.toString()).toBe(c.str);
  });
});

describe('what the operators compute', () => {
  it('VM memory request = template memory + 500M', () => {
    expect(addQuantities('2G', '500M').toString()).toBe('2500M');
    // A binary-SI receiver keeps BinarySI; 2647483648 is not a multiple of 1024, so it prints as
    // plain bytes (not 2647483648 rewritten as 2647483648 / 1000^k, which DecimalSI would try).
    const vm = addQuantities('2Gi', '500M');
    expect(vm.format).toBe('BinarySI');
    expect(vm.toString()).toBe('2647483648');
    // ... and the other way round the receiver is DecimalSI.
    expect(addQuantities('500M', '2Gi').format).toBe('DecimalSI');
    // BinarySI prints integers that are not multiples of 1024 as plain units where DecimalSI
    // would use a suffix:
    expect(addQuantities('1Ki', '976').toString()).toBe('2000');
    expect(addQuantities('1', '1999').toString()).toBe('2k');
    // the template memory may be a plain number
    expect(addQuantities(2147483648, '500M').toString()).toBe('2647483648');
  });

  it('CPU requests and limits in millicores', () => {
    expect(millicores(500).toString()).toBe('500m');
    expect(millicores(2000).toString()).toBe('2');
    expect(millicores(2500).toString()).toBe('2500m');
    expect(millicores(4 * 50 * 10).toString()).toBe('2'); // 4 cores × 50% × 10
    expect(millicores(0).toString()).toBe('0');
    expect(millicores(10n).toString()).toBe('10m');
    expect(parseQuantity('2000m').toString()).toBe('2');
    expect(parseQuantity('100m').add('900m').toString()).toBe('1');
    expect(() => millicores(0.5)).toThrow(RangeError);
  });

  it('tenant quota = sum of workspace quotas (from a zero quantity), compared with the cap', () => {
    const sum = (items: (string | number)[]) => items.reduce<Quantity>((total, q) => addQuantities(total, q), parseQuantity(0));
    expect(sum(['15Gi', '25Gi']).toString()).toBe('40Gi');
    expect(sum([8, '10', 5]).toString()).toBe('23');
    expect(sum([]).toString()).toBe('0');
    // the first non-zero term decides the format, as when adding into a zero resource.Quantity{}
    expect(sum(['0', '2Gi', '500M']).format).toBe('BinarySI');
    expect(sum(['20G', '20G', '20G']).toString()).toBe('60G');
    // the cap applies on "greater than or equal", so an equal cap keeps the cap's spelling
    expect(compareQuantities(sum(['16Gi', '16Gi', '16Gi', '2G']), '50G')).toBe(1);
    expect(compareQuantities('50000M', '50G')).toBe(0);
    expect(compareQuantities('50G', '51200Mi')).toBe(-1);
    expect(compareQuantities('51200Mi', '50G')).toBe(1);
    expect(compareQuantities('1Gi', '1073741824')).toBe(0);
    expect(compareQuantities('1Gi', '1024Mi')).toBe(0);
  });

  it('canonical forms from the spec', () => {
    expect(formatQuantity('1024Mi')).toBe('1Gi');
    expect(formatQuantity('2000m')).toBe('2');
    expect(formatQuantity('500m')).toBe('500m');
    expect(formatQuantity('1.5Gi')).toBe('1536Mi');
    expect(formatQuantity('0.5')).toBe('500m');
    expect(formatQuantity('1e3')).toBe('1e3');
    expect(formatQuantity('999999999n')).toBe('999999999n');
    expect(formatQuantity('0.1m')).toBe('100u');
    expect(formatQuantity('0.0000000001')).toBe('1n'); // rounded up to nano
    // Go keeps an input's own spelling when it looks canonical:
    expect(formatQuantity('+1')).toBe('+1');
    expect(formatQuantity('1.500')).toBe('1.500');
    expect(parseQuantity('1.500').canonical()).toBe('1500m');
    expect(parseQuantity('1.500').add(0).toString()).toBe('1500m');
  });
});

describe('inputs and errors', () => {
  it('reads numbers as int-or-string CRD fields hold them', () => {
    expect(parseQuantity(8).toString()).toBe('8');
    expect(parseQuantity(2147483648).toString()).toBe('2147483648');
    expect(parseQuantity(2000).toString()).toBe('2k');
    expect(parseQuantity(0.5).toString()).toBe('500m');
    expect(parseQuantity(-0).toString()).toBe('0');
    expect(parseQuantity(1e21).toString()).toBe('1e+21'); // String(1e21), kept as typed like Go does
    expect(parseQuantity(12n).toString()).toBe('12');
    expect(isQuantity(25)).toBe(true);
    expect(isQuantity(Number.NaN)).toBe(false);
    expect(isQuantity(Number.POSITIVE_INFINITY)).toBe(false);
    expect(isQuantity(null)).toBe(false);
    expect(isQuantity({})).toBe(false);
  });

  it('explains what is wrong', () => {
    expect(() => parseQuantity('2X')).toThrow(QuantityError);
    expect(() => parseQuantity('2X')).toThrow(/^"2X" is not a valid Kubernetes quantity/);
    expect(() => parseQuantity('1K')).toThrow(`"1K" is not a valid Kubernetes quantity: unable to parse quantity's suffix`);
    expect(() => parseQuantity('.Ei')).toThrow(/unable to parse numeric part/);
    expect(() => parseQuantity(Number.NaN)).toThrow(/^NaN is not a valid Kubernetes quantity/);
    expect(() => parseQuantity(null as unknown as string)).toThrow(/^null is not a valid Kubernetes quantity/);
    const e = (() => {
      try {
        parseQuantity('abc');
      } catch (err) {
        return err as QuantityError;
      }
      return undefined;
    })();
    expect(e?.name).toBe('QuantityError');
    expect(e?.input).toBe('abc');
    expect(e?.reason).toBe('format');
  });

  it('never hangs on absurd exponents', () => {
    expect(parseQuantity('1e2000000000').toString()).toBe('100e1999999998'); // as Go prints it
    expect(parseQuantity('1e-2000000000').toString()).toBe('1e-9'); // rounded up to nano (Go would grind on it)
    expect(() => parseQuantity('1.0000000000000000000e200000')).toThrow(QuantityError);
    expect(isQuantity('1.0000000000000000000e200000')).toBe(false);
    expect(parseQuantity('1e2000000000').cmp('1')).toBe(1);
    expect(() => parseQuantity('1e2000000000').add('1')).toThrow(RangeError);
  });

  it('is immutable and plain to compare', () => {
    const a = parseQuantity('1Gi');
    const b = a.add('1Gi');
    expect(a.toString()).toBe('1Gi');
    expect(b.toString()).toBe('2Gi');
    expect(parseQuantity('1Gi')).toEqual(parseQuantity('1Gi'));
    expect(parseQuantity('1Gi')).not.toEqual(parseQuantity('2Gi'));
    expect(parseQuantity('-1.5').sign()).toBe(-1);
    expect(parseQuantity('0Gi').sign()).toBe(0);
    expect(parseQuantity('0Gi').isZero()).toBe(true);
    expect(parseQuantity('1n').isZero()).toBe(false);
    expect(parseQuantity('2m').sign()).toBe(1);
    expect(() => millicores(2n ** 63n)).toThrow(RangeError);
  });
});
