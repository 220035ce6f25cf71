import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundledEntry, RENDER_WORKER_ENTRY } from '../../runtime/bundle.mjs';
import { packageRoot } from '../../runtime/package-root.mjs';

/** The bootstrap that registers tsx in a worker, then imports `workerData.entry`. */
const TSX_WORKER = 'src/sinks/parallel/tsx-worker.mjs';

export interface WorkerScript {
  /** The file the Worker runs. */
  main: URL;
  /** The worker module (what the tsx bootstrap imports: pass it as `workerData.entry`). */
  entry: string;
}

/**
 * The script a worker of module `entry` runs (the render worker by default): an esbuild bundle of
 * it (src/runtime/bundle.mjs), whether this thread runs the sources or a bundle of them. A worker then loads plain JavaScript
 * instead of registering tsx and transforming every module again, which cost more than a second
 * thread saved. Without esbuild or a writable `.cache/`, the tsx bootstrap.
 */
export async function workerScript(entry = RENDER_WORKER_ENTRY): Promise<WorkerScript> {
  const source = pathToFileURL(join(packageRoot(), entry));
  try {
    return { main: await bundledEntry(entry), entry: source.href };
  } catch {
    return { main: pathToFileURL(join(packageRoot(), TSX_WORKER)), entry: source.href };
  }
}
