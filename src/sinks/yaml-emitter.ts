import jsYaml from 'js-yaml';
import type { KubeObject } from '../api/types.ts';

/**
 * The one YAML emitter every sink uses, so that their bytes agree. js-yaml's dump is several times
 * faster than the `yaml` package's stringify on Kubernetes objects (bench/RESULTS.md); `yaml`
 * stays the parser because it keeps source positions for error messages.
 */
export function objectToYaml(obj: unknown): string {
  return jsYaml.dump(obj, { noRefs: true, lineWidth: -1, quotingType: '"', sortKeys: false });
}

/** Objects as a multi-document YAML stream. */
export function objectsToYaml(objects: readonly KubeObject[]): string {
  return objects.map((o) => `---\n${objectToYaml(o)}`).join('');
}
