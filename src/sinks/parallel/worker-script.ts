import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../../paths.ts';

export interface WorkerScript {
  /** The file the Worker runs. */
  main: URL;
  /** The render worker module (what the tsx bootstrap imports). */
  entry: string;
}

const SOURCE_DIRS = ['src', 'constructs', 'imports'];

/**
 * The script a render worker runs. From compiled output (lib/), the compiled worker. From the
 * TypeScript sources, a bundle of the worker and the sources it imports (packages stay external)
 * made once by esbuild and kept in `.cache/` under a hash of the sources: a worker then loads plain
 * JavaScript instead of registering tsx and transforming every module again, which cost more than
 * a second thread saved. Without esbuild or a writable `.cache/`, the tsx bootstrap.
 */
export async function workerScript(): Promise<WorkerScript> {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) {
    const compiled = new URL('./render-worker.js', here);
    return { main: compiled, entry: compiled.href };
  }
  const source = new URL('./render-worker.ts', here);
  try {
    return { main: await bundled(source), entry: source.href };
  } catch {
    return { main: new URL('./tsx-worker.mjs', here), entry: source.href };
  }
}

let cached: Promise<URL> | undefined;

function bundled(source: URL): Promise<URL> {
  cached ??= (async () => {
    const root = projectRoot();
    const dir = join(root, '.cache');
    const file = join(dir, `render-worker-${sourcesHash(root)}.mjs`);
    if (!existsSync(file)) {
      const { build } = await import('esbuild');
      const result = await build({ entryPoints: [source.pathname], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', write: false, logLevel: 'silent' });
      mkdirSync(dir, { recursive: true });
      const tmp = `${file}.tmp-${process.pid}`;
      writeFileSync(tmp, result.outputFiles[0].text);
      renameSync(tmp, file);
      for (const old of readdirSync(dir)) if (/^render-worker-\w+\.mjs$/.test(old) && join(dir, old) !== file) rmSync(join(dir, old), { force: true });
    }
    return pathToFileURL(file);
  })();
  return cached;
}

/** The TypeScript sources a worker bundle is made of (names and contents), and how it is made. */
function sourcesHash(root: string): string {
  const h = createHash('sha256').update(`bundle-v1 ${process.version}\n`);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) {
        h.update(`${path}\0`).update(readFileSync(path)).update('\0');
      }
    }
  };
  for (const d of SOURCE_DIRS) walk(join(root, d));
  return h.digest('hex').slice(0, 16);
}
