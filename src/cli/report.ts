import { formatProblem, hasErrors, type Problem } from '../api/problems.ts';

export const EXIT_OK = 0;
export const EXIT_INPUT = 1;
export const EXIT_USAGE = 2;

/** Prints problems to stderr (errors always, warnings unless quiet); true when any is an error. */
export function reportProblems(problems: readonly Problem[], quiet = false): boolean {
  for (const p of problems) {
    if (p.severity === 'warning' && quiet) continue;
    process.stderr.write(`${formatProblem(p)}\n`);
  }
  const errors = problems.filter((p) => p.severity === 'error').length;
  if (errors > 0) process.stderr.write(`${errors} error${errors === 1 ? '' : 's'}: nothing was written\n`);
  return hasErrors(problems);
}
