import { Inventory } from './inventory.ts';
import { readInputs, type ReadOptions } from './parse.ts';
import type { Problem } from './problems.ts';

/** Files and folders → a resolved Inventory, with every problem found on the way. */
export function loadInventory(paths: readonly string[], options: ReadOptions = {}): { inventory: Inventory; problems: Problem[]; files: string[] } {
  const parsed = readInputs(paths, options);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects);
  return { inventory, problems: [...parsed.problems, ...problems], files: parsed.files };
}
