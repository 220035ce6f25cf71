// The fuzz budget and seed. CI (`npm test`) runs a fixed seed and ~12,100 cases in all; `npm run fuzz`
// sets a random seed and a larger budget through the environment:
//   FUZZ_SEED             base seed (a number; "random" picks one); default: CI_SEED
//   FUZZ_RUNS             cases over all properties, shared as CI_RUNS shares them; default: their sum
//   FUZZ_PATH             replay one failing case (the `path` of a failure message, with its seed)
//   FUZZ_CASE_TIMEOUT_MS  a case taking longer is a hang (default 30 s: ~1,000 times a normal case)
//   FUZZ_SHRINK_MS        time spent shrinking a failure to a smaller one before reporting it (default 60 s)
//   FUZZ_SURVEY=1         check every case and report all distinct failures, unshrunk (`npm run fuzz`)
import fc from 'fast-check';

/** The fixed seed of the CI run. */
export const CI_SEED = 1414;

/** Cases per property in the CI run: ≥ 10,000 in all, ~2 minutes on a busy 2-core machine. */
export const CI_RUNS = {
  'documents: object edits': 1500,
  'documents: unknown fields': 150,
  'documents: text edits': 1500,
  'documents: watch mode': 200,
  'watch: edit sequences': 200,
  'watch: edit sequences, real process': 5,
  'cli: end to end': 20,
  'user-pods: HTTP': 3500,
  'webhooks: HTTP': 3500,
  'webhooks: decisions': 1500,
} as const;

export type PropertyName = keyof typeof CI_RUNS;

const CI_TOTAL = Object.values(CI_RUNS).reduce((a, b) => a + b, 0);

function numberFrom(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`${name} must be an integer, not "${raw}"`);
  return n;
}

function baseSeed(): number {
  const raw = process.env.FUZZ_SEED;
  if (raw === 'random') return Math.floor(Math.random() * 2 ** 31);
  return numberFrom('FUZZ_SEED', CI_SEED);
}

export const settings = {
  seed: baseSeed(),
  total: numberFrom('FUZZ_RUNS', CI_TOTAL),
  path: process.env.FUZZ_PATH || undefined,
  caseTimeoutMs: numberFrom('FUZZ_CASE_TIMEOUT_MS', 30_000),
  shrinkMs: numberFrom('FUZZ_SHRINK_MS', 60_000),
  survey: process.env.FUZZ_SURVEY === '1',
};

/** Cases of one property: its share of FUZZ_RUNS (at least one). */
export function runsOf(name: PropertyName): number {
  return Math.max(1, Math.round((settings.total * CI_RUNS[name]) / CI_TOTAL));
}

/** Each property draws from its own stream, derived from the base seed and its name. */
export function seedOf(name: PropertyName): number {
  let h = settings.seed | 0;
  for (const ch of name) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193);
  return h | 0;
}

/**
 * A backstop for a whole property, far above its normal time even on a loaded machine (cases
 * have their own limit): `msPerCase` is ~10 times a case's CPU time.
 */
export function timeoutOf(name: PropertyName, msPerCase: number): number {
  // A survey checks every case, hangs included (each one FUZZ_CASE_TIMEOUT_MS): no backstop there.
  if (settings.survey) return 24 * 3600_000;
  return 120_000 + runsOf(name) * msPerCase + settings.shrinkMs * 2;
}

/**
 * Checks `check` on `numRuns` cases of `arb` with the property's seed. A failure message starts with
 * what reproduces it: the base seed, the property's seed and the path of the failing case.
 *
 * With FUZZ_SURVEY=1 (`npm run fuzz`) every case is checked and the distinct failures (by their
 * first line) are reported together, each with the path that replays it, instead of the first one
 * shrunk.
 */
export async function fuzz<T>(name: PropertyName, file: string, arb: fc.Arbitrary<T>, check: (value: T) => Promise<void>): Promise<{ runs: number }> {
  const seed = seedOf(name);
  const numRuns = runsOf(name);
  const survey = settings.survey && !settings.path;
  console.log(`fuzz "${name}": ${numRuns} cases, seed ${seed} (FUZZ_SEED=${settings.seed}${settings.path ? `, FUZZ_PATH=${settings.path}` : ''}${survey ? ', survey' : ''})`);
  const repro = (path: string) => `FUZZ_SEED=${settings.seed} FUZZ_PATH=${path} npx vitest run --project fuzz ${file} -t '${name}'`;
  const message = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const found = new Map<string, { count: number; path: string; value: T; message: string }>();
  let index = 0;
  const predicate = survey
    ? async (value: T) => {
        const path = String(index++);
        try {
          await check(value);
        } catch (e) {
          const text = message(e);
          const key = text
            .split('\n')[0]
            .replace(/"(?:[^"\\]|\\.)*"/g, '"…"')
            .replace(/[^\s()'"]+\.(?:ya?ml|json)\b/g, 'FILE')
            .replace(/;.*|\(accepted\)/, '')
            .replace(/\d+/g, 'N');
          const seen = found.get(key);
          if (seen) seen.count++;
          else found.set(key, { count: 1, path, value, message: text });
        }
      }
    : shrinkBudget(check);
  const details = await fc.check(fc.asyncProperty(arb, predicate), { seed, numRuns, path: settings.path, endOnFailure: false });
  if (details.failed) {
    const path = details.counterexamplePath ?? '';
    const report = (await fc.asyncDefaultReportMessage(details)) ?? '';
    throw new Error(`fuzz "${name}" failed with seed ${seed}, path ${path} (base FUZZ_SEED=${settings.seed}); reproduce with:\n  ${repro(path)}\n\n${report.replace(/\n\nHint: .*$/s, '')}\n\nWhat failed:\n${message(details.errorInstance)}`);
  }
  if (found.size) {
    const parts = [...found.values()].map((f) => `${f.count}× ${f.message.slice(0, 2000)}\n  case: ${fc.stringify(f.value).slice(0, 1500)}\n  replay: ${repro(f.path)}`);
    throw new Error(`fuzz "${name}" (seed ${seed}, base FUZZ_SEED=${settings.seed}): ${found.size} distinct failures in ${numRuns} cases\n\n${parts.join('\n\n')}`);
  }
  return { runs: details.numRuns };
}

/**
 * Wraps a case check so that, once a case failed, shrinking stops after FUZZ_SHRINK_MS: later
 * candidates pass unchecked, and the smallest failing case found so far is the one reported.
 * Cases before the first failure are all checked.
 */
function shrinkBudget<A extends unknown[]>(check: (...args: A) => Promise<void>): (...args: A) => Promise<void> {
  let failedAt: number | undefined;
  return async (...args: A) => {
    if (failedAt !== undefined && Date.now() - failedAt > settings.shrinkMs) return;
    try {
      await check(...args);
    } catch (e) {
      failedAt ??= Date.now();
      throw e;
    }
  };
}
