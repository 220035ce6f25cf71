import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cachedRoot: string | undefined;

/**
 * The folder holding this package's package.json. Found by walking up from this module, so it
 * works both when run from sources (tsx) and from compiled output (lib/).
 */
export function projectRoot(): string {
  if (cachedRoot) return cachedRoot;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) || !existsSync(join(dir, 'imports', 'crds'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find the crownlabs-composer package root (imports/crds)');
    dir = parent;
  }
  cachedRoot = dir;
  return dir;
}

export function crdsDir(): string {
  return join(projectRoot(), 'imports', 'crds');
}
