import { join } from 'node:path';
import { packageRoot } from './runtime/package-root.mjs';

/** The vendored CRDs (CrownLabs, KubeVirt, CDI, Argo CD). */
export function crdsDir(): string {
  return join(packageRoot(), 'imports', 'crds');
}

