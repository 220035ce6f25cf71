import { Inventory } from './inventory.ts';
import { readInputs, type ReadOptions, type SourcedObject } from './parse.ts';
import type { Problem } from './problems.ts';

/** Files and folders → a resolved Inventory, with every problem found on the way. */
export function loadInventory(paths: readonly string[], options: ReadOptions = {}): { inventory: Inventory; problems: Problem[]; files: string[] } {
  const parsed = readInputs(paths, options);
  return { ...inventoryFromInput(parsed.objects, parsed.problems), files: parsed.files };
}

/** Most Instances a broken Template's error names; the rest are counted. */
const MAX_USERS_SHOWN = 5;

/**
 * The Inventory of parsed input objects, with the problems of reading them (`readProblems`) and of
 * their references. A Template refused with an error keeps that one error, which then says which
 * Instances use it, instead of one "Template not found" per Instance.
 */
export function inventoryFromInput(objects: readonly SourcedObject[], readProblems: readonly Problem[]): { inventory: Inventory; problems: Problem[] } {
  const refused = new Set(readProblems.filter((p) => p.severity === 'error' && p.kind === 'Template' && p.name).map((p) => p.name!));
  const { inventory, problems: references } = Inventory.fromObjects(objects, refused);
  const problems = [...readProblems];
  for (const [template, users] of inventory.templateUsers) {
    const i = problems.findIndex((p) => p.severity === 'error' && p.kind === 'Template' && p.name === template);
    const shown = users.slice(0, MAX_USERS_SHOWN).join(', ') + (users.length > MAX_USERS_SHOWN ? `, and ${users.length - MAX_USERS_SHOWN} more` : '');
    const n = users.length === 1 ? '1 Instance' : `${users.length} Instances`;
    problems[i] = { ...problems[i], message: `${problems[i].message} (used by ${n}, not rendered: ${shown})` };
  }
  return { inventory, problems: [...problems, ...references] };
}
