import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { InputObject } from '../../inputs/types.ts';
import { renderUnit, type RenderUnit } from '../../compose/compose.ts';
import type { ComposerConfig } from '../../config/config.ts';
import { checkSetObjects, type SetCheck } from '../../compose/prewrite.ts';
import type { GitopsTreeBuilder, SetFiles } from '../gitops.ts';
import { objectsToYaml } from '../yaml-emitter.ts';
import { workerScript } from './worker-script.ts';

export type RenderMode = 'synth' | 'gitops';

/** What a sink keeps of a rendered set: strings, cheap to pass between threads. */
export interface SetOutput {
  objectCount: number;
  /** The set's part of the pre-write checks (src/compose/prewrite.ts). */
  check: SetCheck;
  /** synth: the set's YAML file. */
  yaml?: string;
  /** gitops: the set's files (the tree builder is primed with them). */
  gitops?: SetFiles;
}

export interface WorkerInput {
  objects: InputObject[];
  config: ComposerConfig;
  mode: RenderMode;
  /** Unit ids in composition order: a claimed index range names the units to render. */
  ids: string[];
  parents: RenderUnit['parent'][];
  /** Int32 [0]: the next unclaimed unit index, shared by every thread. */
  next: SharedArrayBuffer;
  chunk: number;
  /** The worker module to run (the tsx bootstrap imports it after registering the TypeScript loader). */
  entry: string;
}

export interface WorkerChunk {
  start: number;
  sets: SetOutput[];
}

/** Below this many sets a single thread is faster than starting workers. */
export const PARALLEL_THRESHOLD = 400;
const CHUNK = 48;

export interface ParallelOptions {
  /** Threads rendering, this one included (default: the machine's parallelism). */
  threads?: number;
  onProgress?: (done: number, total: number) => void;
  /** false: only workers render (tests of the worker path). */
  mainThreadRenders?: boolean;
}

export function renderSetOutput(unit: RenderUnit, mode: RenderMode, builder?: GitopsTreeBuilder): SetOutput {
  const objects = renderUnit(unit);
  const check = checkSetObjects(objects);
  if (mode === 'synth') return { objectCount: objects.length, check, yaml: objectsToYaml(objects) };
  return { objectCount: objects.length, check, gitops: builder!.setFilesOf({ unit, objects }) };
}

/**
 * Renders every unit of a composition on this thread and `threads - 1` workers, returning each
 * set's output in unit order. Units are claimed in small chunks from one shared counter, so the
 * split balances itself: this thread starts at once while workers are still loading their modules
 * (a worker that starts late simply claims less). Workers compose from the same validated input
 * objects and render the units they claim; composition is pure, so a unit renders the same anywhere.
 */
export async function renderParallel(
  units: readonly RenderUnit[],
  objects: InputObject[],
  config: ComposerConfig,
  mode: RenderMode,
  builder: GitopsTreeBuilder | undefined,
  options: ParallelOptions = {},
): Promise<SetOutput[]> {
  const { threads = availableParallelism(), onProgress, mainThreadRenders = true } = options;
  const n = units.length;
  const out = new Array<SetOutput | undefined>(n);
  let done = 0;
  const next = new SharedArrayBuffer(4);
  const counter = new Int32Array(next);
  const script = threads > 1 || !mainThreadRenders ? await workerScript() : undefined;
  const workerCount = mainThreadRenders ? threads - 1 : Math.max(1, threads);
  const workers: Worker[] = [];
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const settle = () => wake?.();
  for (let w = 0; script && w < workerCount; w++) {
    const input: WorkerInput = { objects, config, mode, ids: units.map((u) => u.id), parents: units.map((u) => u.parent), next, chunk: CHUNK, entry: script.entry };
    const worker = new Worker(script.main, { workerData: input, execArgv: [] });
    worker.on('message', (msg: WorkerChunk) => {
      msg.sets.forEach((s, i) => {
        const unit = units[msg.start + i];
        if (mode === 'gitops') builder!.prime(unit, s.gitops!);
        out[msg.start + i] = s;
      });
      done += msg.sets.length;
      onProgress?.(done, n);
      settle();
    });
    worker.on('error', (e) => {
      failure ??= e;
      settle();
    });
    worker.on('exit', (code) => {
      if (code !== 0 && done < n) failure ??= new Error(`render worker exited with code ${code}`);
      settle();
    });
    workers.push(worker);
  }
  try {
    while (mainThreadRenders) {
      const start = Atomics.add(counter, 0, CHUNK);
      if (start >= n) break;
      const end = Math.min(n, start + CHUNK);
      for (let i = start; i < end; i++) out[i] = renderSetOutput(units[i], mode, builder);
      done += end - start;
      onProgress?.(done, n);
      // Let worker results in (their messages wait for this thread's event loop).
      if (workers.length) await new Promise((r) => setImmediate(r));
      if (failure) throw failure;
    }
    while (done < n) {
      if (failure) throw failure;
      await new Promise<void>((r) => (wake = r));
    }
  } finally {
    // Every unit is rendered; a worker still loading its modules has nothing left to claim.
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out as SetOutput[];
}
