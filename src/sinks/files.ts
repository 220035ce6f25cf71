import type { RenderedSet } from '../compose/compose.ts';
import { writeTreeAtomically, type TreeWriteOptions, type TreeWriteResult } from './atomic-tree.ts';
import { objectsToYaml } from './yaml-emitter.ts';

/** dist/ layout: one multi-document YAML file per resource set, named after the set. */
export function distFiles(sets: readonly RenderedSet[]): Map<string, string> {
  const files = new Map<string, string>();
  for (const set of sets) files.set(`${set.unit.id}.yaml`, objectsToYaml(set.objects));
  return files;
}

export function writeDist(dir: string, sets: readonly RenderedSet[], opts: TreeWriteOptions = {}): TreeWriteResult {
  return writeTreeAtomically(dir, distFiles(sets), opts);
}

/** Every object of every set, in order, as one YAML stream (`--stdout`). */
export function allObjectsYaml(sets: readonly RenderedSet[]): string {
  return objectsToYaml(sets.flatMap((s) => s.objects));
}
