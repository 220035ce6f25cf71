import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundledEntry, RENDER_WORKER_ENTRY } from '../../runtime/bundle.mjs';
import { packageRoot } from '../../runtime/package-root.mjs';

export interface WorkerScript {
  /** The file the Worker runs. */
  main: URL;
  /** The render worker module (what the tsx bootstrap imports). */
  entry: string;
}

/**
 * The script a render worker runs: an esbuild bundle of the worker module (src/runtime/bundle.mjs),
 * whether this thread runs the sources or a bundle of them. A worker then loads plain JavaScript
 * instead of registering tsx and transforming every module again, which cost more than a second
 * thread saved. Without esbuild or a writable `.cache/`, the tsx bootstrap.
 */
export async function workerScript(): Promise<WorkerScript> {
  const source = pathToFileURL(join(packageRoot(), RENDER_WORKER_ENTRY));
  try {
    return { main: await bundledEntry(RENDER_WORKER_ENTRY), entry: source.href };
  } catch {
    return { main: new URL('./tsx-worker.mjs', source), entry: source.href };
  }
}
