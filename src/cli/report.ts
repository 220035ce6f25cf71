import { formatProblem, hasErrors, type Problem } from '../inputs/problems.ts';
import { OutputError } from '../sinks/output-guard.ts';

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

/** Prints a refused or failed output (exit 1); anything else is rethrown (an internal error). */
export function reportOutputError(err: unknown): number {
  if (!(err instanceof OutputError)) throw err;
  process.stderr.write(`${err.path}: error: ${err.message}\n`);
  return EXIT_INPUT;
}

let stdoutClosed = false;

/**
 * Writes command output to stdout. A reader that stops early (`| head`) closes the pipe: the rest
 * is dropped quietly and the command still exits 0; any other write error is reported (exit 1).
 */
export function writeStdout(text: string): Promise<number> {
  if (stdoutClosed) return Promise.resolve(EXIT_OK);
  const out = process.stdout;
  // The callback below gets every write error; without a listener the stream's 'error' event would
  // end the process with a stack trace.
  if (out.listenerCount('error') === 0) out.on('error', () => undefined);
  return new Promise((resolve) => {
    out.write(text, (err) => {
      if (!err) return resolve(EXIT_OK);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') {
        stdoutClosed = true;
        return resolve(EXIT_OK);
      }
      process.stderr.write(`stdout: error: cannot write: ${err.message}\n`);
      resolve(EXIT_INPUT);
    });
  });
}
