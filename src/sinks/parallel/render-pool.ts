import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { InputObject } from '../../api/types.ts';
import type { ComposerConfig } from '../../config/config.ts';
import { parentKey, type ParentRef } from '../../model/labels.ts';
import type { SetFiles } from '../gitops.ts';

export interface WorkerInput {
  objects: InputObject[];
  config: ComposerConfig;
  index: number;
  count: number;
  mode: 'synth' | 'gitops';
  /** The worker module (the bootstrap imports it after registering the TypeScript loader). */
  entry: string;
}

export interface WorkerSet {
  id: string;
  parent: ParentRef;
  dependsOn: string[];
  objectCount: number;
  yaml?: string;
  gitops?: SetFiles;
}

export interface WorkerOutput {
  sets: WorkerSet[];
}

/** Which worker renders a parent: a stable hash, so the split is balanced and deterministic. */
export function bucketOf(parent: ParentRef, count: number): number {
  return createHash('sha1').update(parentKey(parent)).digest().readUInt32BE(0) % count;
}

/** Below this many sets a single thread is faster than starting workers. */
export const PARALLEL_THRESHOLD = 400;

/**
 * Renders every set of the (already validated) input objects on `workers` threads and returns
 * each set's output, in no particular order. The composition is the same pure function as in the
 * main thread; only the work is split.
 */
export async function renderInWorkers(objects: InputObject[], config: ComposerConfig, mode: 'synth' | 'gitops', workers = availableParallelism()): Promise<WorkerSet[]> {
  const fromSources = import.meta.url.endsWith('.ts');
  const entry = new URL(`./render-worker.${fromSources ? 'ts' : 'js'}`, import.meta.url);
  const bootstrap = fromSources ? new URL('./tsx-worker.mjs', import.meta.url) : entry;
  const runs = Array.from({ length: workers }, (_, index) =>
    new Promise<WorkerSet[]>((resolve, reject) => {
      const worker = new Worker(bootstrap, {
        workerData: { objects, config, index, count: workers, mode, entry: entry.href } satisfies WorkerInput,
      });
      worker.once('message', (out: WorkerOutput) => resolve(out.sets));
      worker.once('error', reject);
      worker.once('exit', (code) => {
        if (code !== 0) reject(new Error(`render worker ${index} exited with code ${code}`));
      });
    }),
  );
  return (await Promise.all(runs)).flat();
}

/** Worker results lined up with the composition's units; a missing set is a bug, not an input error. */
export function inUnitOrder(units: readonly { id: string }[], sets: readonly WorkerSet[]): WorkerSet[] {
  const byId = new Map(sets.map((s) => [s.id, s]));
  return units.map((unit) => {
    const s = byId.get(unit.id);
    if (!s) throw new Error(`render worker lost resource set ${unit.id}`);
    return s;
  });
}
