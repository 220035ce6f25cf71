import { InvalidArgumentError } from 'commander';

/**
 * commander argParsers for numeric flags: a value out of range, negative, fractional or not a
 * number is a usage error (exit 2) that names the flag (commander adds it) and the accepted range.
 */
export function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    const n = /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** Render threads (-j): more than this only adds memory on any machine crownlabs runs on. */
export const MAX_JOBS = 64;
/** `gitops --watch --debounce` (ms): up to one minute. */
export const MAX_DEBOUNCE_MS = 60_000;
/** `--lock-timeout` (s): a day at most. */
export const MAX_LOCK_TIMEOUT_S = 86_400;
