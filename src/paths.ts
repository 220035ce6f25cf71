import { join } from 'node:path';
import { packageRoot } from './runtime/package-root.mjs';

/** The vendored CRDs (CrownLabs, KubeVirt, CDI, Argo CD, Gateway API, Envoy Gateway SecurityPolicy). */
export function crdsDir(): string {
  return join(packageRoot(), 'imports', 'crds');
}


/** Compiled ajv validators (src/inputs/ajv-cache.ts): safe to delete. */
export function schemaCacheDir(): string {
  return join(packageRoot(), '.cache', 'schemas');
}
