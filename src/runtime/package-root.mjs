// Plain JavaScript: bin/crownlabs.js needs it before any TypeScript runs.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached;

/**
 * The folder holding this package's package.json and vendored CRDs. Found by walking up from this
 * module, so it is right from the sources (tsx), from compiled output (lib/) and from a bundle in
 * `.cache/` alike.
 */
export function packageRoot() {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'imports', 'crds'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the crownlabs-composer package root (imports/crds)');
    dir = parent;
  }
  cached = dir;
  return dir;
}
