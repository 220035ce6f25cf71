import { setFlagsFromString } from 'node:v8';

/**
 * How far V8 lets the controller's old generation grow past what the last full GC kept, in percent.
 * By default V8 picks a factor from the GC's and the program's speeds, up to 4×: in a 1,000-Instance
 * burst it let RSS reach ~181 MB while ~45–55 MB lived. A fixed 20% kept the burst's peak at
 * 144–148 MB, with CPU within the machine's noise (10, 20 and 30% alike; bench/controller.ts, round 6).
 */
export const CONTROLLER_HEAP_GROWING_PERCENT = 20;

const GIVEN = /^--heap[-_]growing[-_]percent(=|$)/;

/**
 * Sets the controller's heap growth (V8 reads it at each full GC, so setting it at start-up works
 * as node's command-line flag does), unless node was started with the flag: that value wins.
 * True when this set it.
 */
export function applyControllerHeapGrowth(execArgv: readonly string[] = process.execArgv): boolean {
  if (execArgv.some((a) => GIVEN.test(a))) return false;
  setFlagsFromString(`--heap-growing-percent=${CONTROLLER_HEAP_GROWING_PERCENT}`);
  return true;
}
