import { lstatSync } from 'node:fs';
import { join } from 'node:path';

// Shared by the sinks (which write the marker) and the input reader (which skips marked folders),
// so it sits outside both: no module imports a later stage of the flow.

/** The file that marks a folder as written by crownlabs: it may be replaced whole, and is never read as input. */
export const OUTPUT_MARKER = '.crownlabs-output';

export const OUTPUT_MARKER_TEXT =
  'This folder is written by crownlabs-composer (crownlabs synth / gitops): every run replaces it whole,\n' +
  'so files added here by hand are removed by the next run. It is never read back as input.\n';

/** True when `dir` is a folder holding the marker (a regular file, not a link). */
export function isOutputFolder(dir: string): boolean {
  try {
    return lstatSync(join(dir, OUTPUT_MARKER)).isFile();
  } catch {
    return false;
  }
}
