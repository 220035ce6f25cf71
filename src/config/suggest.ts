/**
 * "Did you mean" for configuration keys. No library in the dependency tree exports one (commander's
 * suggestSimilar is internal; it suggests flags, see src/cli/main.ts); this follows its rules:
 * optimal string alignment distance, at most 3 edits, and similar enough to the typed word.
 */
const MAX_DISTANCE = 3;

export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > MAX_DISTANCE) return Math.max(a.length, b.length);
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 0; j <= b.length; j++) d[0][j] = j;
  for (let j = 1; j <= b.length; j++) {
    for (let i = 1; i <= a.length; i++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The candidate nearest to `word`, or undefined. Each candidate may be written several ways (the
 * key, its flag, its environment variable): `spellings` gives them; case, '-' and '_' are ignored.
 */
export function nearest<T>(word: string, candidates: readonly T[], spellings: (c: T) => readonly string[]): T | undefined {
  const norm = (s: string) => s.replace(/^-+/, '').replace(/[-_]/g, '').toLowerCase();
  const w = norm(word);
  if (w === '') return undefined;
  let best: T | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    for (const s of spellings(c)) {
      const n = norm(s);
      const distance = editDistance(w, n);
      // As commander: within 3 edits, and sharing at least 40% of the longer word.
      if (distance > MAX_DISTANCE || (Math.max(w.length, n.length) - distance) / Math.max(w.length, n.length) <= 0.4) continue;
      if (distance < bestDistance) {
        best = c;
        bestDistance = distance;
      }
    }
  }
  return best;
}
