/**
 * The public-exposure IP pool (docs/behaviour.md §18): entries are single IPv4 addresses, ranges
 * `a-b` (both ends included) and CIDRs (every address of the block, network and broadcast too, as
 * upstream's ParseIPPool), expanded in the order given, each address once.
 */

/** Most addresses a pool may expand to: a typo like /8 would otherwise hold 16M addresses in memory. */
export const MAX_POOL_ADDRESSES = 65536;

const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

export function ipv4ToNumber(ip: string): number | undefined {
  if (!IPV4.test(ip)) return undefined;
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

export function numberToIpv4(n: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}

/** The first and last address of one entry, or the reason it is not one. */
export function poolEntryRange(entry: string): { first: number; last: number } | { error: string } {
  const e = entry.trim();
  if (e.includes('/')) {
    const [ip, bits, ...rest] = e.split('/');
    const base = ipv4ToNumber(ip);
    const prefix = /^\d{1,2}$/.test(bits ?? '') ? Number(bits) : NaN;
    if (rest.length || base === undefined || !(prefix >= 0 && prefix <= 32)) return { error: `"${e}" is not an IPv4 CIDR (a.b.c.d/n)` };
    const size = 2 ** (32 - prefix);
    const first = Math.floor(base / size) * size;
    return { first, last: first + size - 1 };
  }
  if (e.includes('-')) {
    const [a, b, ...rest] = e.split('-').map((s) => s.trim());
    const first = ipv4ToNumber(a);
    const last = ipv4ToNumber(b ?? '');
    if (rest.length || first === undefined || last === undefined) return { error: `"${e}" is not an IPv4 range (a.b.c.d-e.f.g.h)` };
    if (last < first) return { error: `"${e}" ends before it starts` };
    return { first, last };
  }
  const n = ipv4ToNumber(e);
  return n === undefined ? { error: `"${e}" is not an IPv4 address, range or CIDR` } : { first: n, last: n };
}

/** Every address of the pool, in order, once; or the first entry's error. */
export function expandIpPool(entries: readonly string[]): { addresses: string[] } | { error: string } {
  const seen = new Set<number>();
  const addresses: string[] = [];
  for (const entry of entries) {
    const r = poolEntryRange(entry);
    if ('error' in r) return r;
    if (r.last - r.first + 1 + seen.size > MAX_POOL_ADDRESSES) return { error: `expands to more than ${MAX_POOL_ADDRESSES} addresses` };
    for (let n = r.first; n <= r.last; n++) {
      if (seen.has(n)) continue;
      seen.add(n);
      addresses.push(numberToIpv4(n));
    }
  }
  return { addresses };
}
