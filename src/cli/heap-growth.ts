import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets a command's old generation grow past what the last full GC kept, in percent.
 * By default V8 picks a factor from the GC's and the program's speeds, up to 4×, and memory peaks
 * far above what lives (bench/RESULTS.md, 2026-11-27):
 * - controller: a 1,000-Instance burst reached ~181 MB of RSS with ~50 MB live; 20% kept it at
 *   144–148 MB (10 and 30% alike), CPU within the noise (bench/controller.ts, round 6).
 * - synth and gitops: at 5k Instances a first gitops tree peaked at 325–343 MB, 283–295 MB with
 *   100% (+8% CPU), and synth's 269–290 MB fell to 245–250 MB (CPU unchanged); one changed
 *   Instance within the noise. Not validate: its schema thread's small heap then grew more (+15–35 MB).
 * - gitops --watch, long-running as the controller: at 5k Instances 100% let 40 updates take the
 *   peak RSS from ~285 to 400–422 MB (V8 waits for the heap to double before a full GC); 20% held
 *   it at 299–315 MB (286–294 with the sets' objects released, LabSession.releaseObjects), the
 *   updates' median time about the same (73–82 against 70–77 ms).
 */
export const HEAP_GROWING_PERCENT = { controller: 20, render: 100, watch: 20 } as const;

const GIVEN = /^--heap[-_]growing[-_]percent(?:=(.*))?$/;

/** The value node was started with (`--heap-growing-percent=N` or `… N`), if any. */
export function givenHeapGrowth(execArgv: readonly string[] = process.execArgv): string | undefined {
  for (let i = 0; i < execArgv.length; i++) {
    const m = GIVEN.exec(execArgv[i]);
    if (m) return m[1] ?? execArgv[i + 1] ?? '';
  }
  return undefined;
}

/**
 * Sets the heap growth (V8 reads it at each full GC, so setting it at start-up works as node's
 * command-line flag does), unless node was started with the flag: that value wins. True when this set it.
 */
export function applyHeapGrowth(percent: number, execArgv: readonly string[] = process.execArgv): boolean {
  if (givenHeapGrowth(execArgv) !== undefined) return false;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}
