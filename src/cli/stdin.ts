import { readStdin, STDIN_PATH, type ReadResult } from '../inputs/input-file.ts';
import { EXIT_USAGE } from './report.ts';

/**
 * `-f -` names standard input, as in kubectl. It can be read only once: naming it twice is a
 * usage error, printed as commander prints its own; returns the exit code (2) then.
 */
export function stdinUsageError(command: string, files: readonly string[] | undefined): number | undefined {
  if ((files ?? []).filter((f) => f === STDIN_PATH).length <= 1) return undefined;
  return usageError(command, '-f - given more than once: standard input can be read only once');
}

/** Standard input when `-f -` names it, read with the limits of an input file (`maxBytes`). */
export async function stdinIfNamed(files: readonly string[] | undefined, maxBytes: number): Promise<ReadResult | undefined> {
  return (files ?? []).includes(STDIN_PATH) ? readStdin(maxBytes) : undefined;
}

/** A usage error found by a command itself: one line and where to look (exit 2). */
export function usageError(command: string, message: string): number {
  process.stderr.write(`error: ${message}\nsee 'crownlabs ${command} --help'\n`);
  return EXIT_USAGE;
}
