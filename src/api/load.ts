import { Inventory } from './inventory.ts';
import { readInputs } from './parse.ts';
import type { Problem } from './problems.ts';

/** Files and folders → a resolved Inventory, with every problem found on the way. */
export function loadInventory(paths: readonly string[], cwd = process.cwd()): { inventory: Inventory; problems: Problem[]; files: string[] } {
  const parsed = readInputs(paths, cwd);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects);
  return { inventory, problems: [...parsed.problems, ...problems], files: parsed.files };
}
