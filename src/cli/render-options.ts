import { STDIN_PATH } from '../inputs/input-file.ts';

/*
 * What `synth` and `gitops` take, shared by each command's light front (the run record check) and its
 * render module, which the front loads only when it must render: neither imports the other.
 */

export interface SynthOptions {
  file: string[];
  output: string;
  stdout?: boolean;
  quiet?: boolean;
  jobs: number;
  /** Seconds to wait while another run holds the output folder's lock. */
  lockTimeout?: number;
  [key: string]: unknown;
}

/**
 * `gitops --check`: 0 up to date, 1 stale (as `diff`), 3 nothing compared: the input or the
 * configuration is invalid, or the folder cannot be read. (2 stays the CLI's usage error.)
 */
export const CHECK_EXIT = { upToDate: 0, stale: 1, invalid: 3 } as const;

export interface GitopsOptions {
  file: string[];
  output: string;
  check?: boolean;
  fullDiff?: boolean;
  watch?: boolean;
  debounce: number;
  quiet?: boolean;
  jobs: number;
  /** Seconds to wait while another run holds the output folder's lock. */
  lockTimeout?: number;
  [key: string]: unknown;
}

/** What a command reads: its -f paths and its config file (an output must not overlap them). */
export function inputPaths(opts: { file: string[]; config?: unknown }): string[] {
  const files = opts.file.filter((f) => f !== STDIN_PATH);
  return typeof opts.config === 'string' ? [...files, opts.config] : files;
}
