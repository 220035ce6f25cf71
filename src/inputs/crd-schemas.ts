import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import jsYaml from 'js-yaml';
import { crdsDir } from '../paths.ts';

/** One served version of a vendored CRD. */
export interface CrdVersion {
  group: string;
  kind: string;
  plural: string;
  version: string;
  namespaced: boolean;
  schema: Record<string, unknown>;
  /** The vendored file it came from. */
  file: string;
}

interface CrdDocument {
  kind?: string;
  spec?: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; plural: string };
    versions: { name: string; served: boolean; schema?: { openAPIV3Schema?: Record<string, unknown> } }[];
  };
}

const cache = new Map<string, CrdVersion[]>();

/**
 * Reads the vendored CRDs whose file name starts with one of `prefixes` (e.g. `crownlabs.polito.it_`),
 * from `dir` (default imports/crds/; a CrownLabs API level's own folder: src/inputs/api-level.ts).
 * KubeVirt's files are large, so callers load only the groups they need.
 */
export function loadCrdVersions(prefixes: readonly string[], dir: string = crdsDir()): CrdVersion[] {
  const key = `${dir}\0${prefixes.join(',')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const out: CrdVersion[] = [];
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.yaml') || !prefixes.some((p) => file.startsWith(p))) continue;
    for (const doc of parseCrdFile(readFileSync(join(dir, file), 'utf8'))) {
      const crd = doc as CrdDocument | null;
      if (!crd || crd.kind !== 'CustomResourceDefinition' || !crd.spec) continue;
      for (const v of crd.spec.versions) {
        if (!v.served || !v.schema?.openAPIV3Schema) continue;
        out.push({
          group: crd.spec.group,
          kind: crd.spec.names.kind,
          plural: crd.spec.names.plural,
          version: v.name,
          namespaced: crd.spec.scope === 'Namespaced',
          schema: v.schema.openAPIV3Schema,
          file: join(dir, file),
        });
      }
    }
  }
  cache.set(key, out);
  return out;
}

/**
 * The documents of a vendored CRD file. js-yaml (YAML 1.2 core schema) reads KubeVirt's CRDs ~10×
 * faster than the `yaml` package (~0.4 s of every `crownlabs validate`); a unit test holds the two
 * equal on every vendored file.
 */
export function parseCrdFile(text: string): unknown[] {
  return jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA });
}

export const CROWNLABS_CRD_PREFIX = 'crownlabs.polito.it_';
