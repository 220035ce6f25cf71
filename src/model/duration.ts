/** Parses a Go-style duration (`10h`, `90m`, `1h30m`, `45s`) into milliseconds. */
export function parseDuration(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (consumed !== text.length || consumed === 0) throw new Error(`invalid duration "${text}" (e.g. 10h, 90m, 1h30m)`);
  return total;
}
