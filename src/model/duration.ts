// Go durations: the one parser and the one formatter.

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

/** Go's time.Duration.String() for whole milliseconds (`1h0m5s`, `1m30s`, `45s`, `250ms`, `0s`). */
export function goDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  if (ms === 0) return '0s';
  const sign = ms < 0 ? '-' : '';
  const a = Math.abs(ms);
  if (a < 1000) return `${sign}${a}ms`;
  const h = Math.floor(a / 3_600_000);
  const m = Math.floor((a % 3_600_000) / 60_000);
  const sMs = a % 60_000;
  const s = sMs % 1000 === 0 ? String(sMs / 1000) : (sMs / 1000).toFixed(3).replace(/0+$/, '');
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
