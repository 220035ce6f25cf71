import type { ApiLevel } from './api-level.ts';
import { Inventory } from './inventory.ts';
import { readInputs, type ReadOptions, type SourcedObject } from './parse.ts';
import type { Problem } from './problems.ts';

/** Files and folders → a resolved Inventory, with every problem found on the way. */
export function loadInventory(paths: readonly string[], options: ReadOptions = {}): { inventory: Inventory; problems: Problem[]; files: string[] } {
  const parsed = readInputs(paths, options);
  return { ...inventoryFromInput(parsed.objects, parsed.problems, options.level), files: parsed.files };
}

/** Most Instances a broken Template's error names; the rest are counted. */
const MAX_USERS_SHOWN = 5;

/**
 * The Inventory of parsed input objects, with the problems of reading them (`readProblems`) and of
 * their references. A Template refused with an error keeps that one error, which then says which
 * Instances use it, instead of one "Template not found" per Instance.
 */
export function inventoryFromInput(objects: readonly SourcedObject[], readProblems: readonly Problem[], level?: ApiLevel): { inventory: Inventory; problems: Problem[] } {
  const refused = new Set(readProblems.filter((p) => p.severity === 'error' && p.kind === 'Template' && p.name).map((p) => p.name!));
  const { inventory, problems: references } = Inventory.fromObjects(objects, refused, level);
  const problems: Problem[] = [...readProblems];
  for (const [template, users] of inventory.templateUsers) {
    const i = problems.findIndex((p) => p.severity === 'error' && p.kind === 'Template' && p.name === template);
    const shown = users.slice(0, MAX_USERS_SHOWN).join(', ') + (users.length > MAX_USERS_SHOWN ? `, and ${users.length - MAX_USERS_SHOWN} more` : '');
    const n = users.length === 1 ? '1 Instance' : `${users.length} Instances`;
    problems[i] = { ...problems[i], message: `${problems[i].message} (used by ${n}, not rendered: ${shown})` };
  }
  const kept = withoutCascade(problems, references);
  return { inventory, problems: [...problems, ...kept] };
}

/** A reference problem of `checkReferences`: what it names as missing. */
const DANGLING = /^(Template|Tenant|Workspace) (\S+) not found/;
/** Most missing objects the note on an unreadable file names; the rest are counted. */
const MAX_MISSING_SHOWN = 3;

/**
 * The reference problems left once those that follow from a read error are taken out: a reference
 * to an object refused with an error of its own is not reported again, and one to an object not
 * found that a document which does not parse seems to define (a `name:` line of it), or that a
 * file not read at all may define, is not listed: the first such read error says how many more
 * problems may follow from it (a tab in one file must not bury its one error under a "not found"
 * per Instance).
 * `readProblems` is edited in place (that note).
 */
function withoutCascade(readProblems: Problem[], references: readonly Problem[]): Problem[] {
  const refused = new Set(readProblems.filter((p) => p.severity === 'error' && p.kind && p.name).map((p) => `${p.kind} ${p.name}`));
  // A document that does not parse may define the names of its `name:` lines; a file not read at all, anything.
  const unread = readProblems.filter((p) => p.severity === 'error' && p.file !== undefined && !p.kind && p.field === undefined);
  const mayDefine = (target: string) => unread.some((p) => !p.mayDefine || p.mayDefine.includes(target.split('/').pop()!));
  const kept: Problem[] = [];
  const held: Problem[] = [];
  let unreadable = -1;
  for (const p of references) {
    const m = DANGLING.exec(p.message);
    if (m && refused.has(`${m[1]} ${m[2]}`)) continue;
    if (m && mayDefine(m[2])) {
      held.push(p);
      const i = readProblems.findIndex((r) => unread.includes(r) && (!r.mayDefine || r.mayDefine.includes(m[2].split('/').pop()!)));
      if (unreadable < 0 || i < unreadable) unreadable = i;
    } else kept.push(p);
  }
  if (held.length) {
    const missing = [...new Set(held.map((p) => DANGLING.exec(p.message)!.slice(1, 3).join(' ')))];
    const shown = missing.slice(0, MAX_MISSING_SHOWN).join(', ') + (missing.length > MAX_MISSING_SHOWN ? `, and ${missing.length - MAX_MISSING_SHOWN} more` : '');
    const n = held.length === 1 ? '1 more problem' : `${held.length} more problems`;
    const p = readProblems[unreadable];
    readProblems[unreadable] = { ...p, message: `${p.message} (${n} may follow from this, not listed: ${held.length === 1 ? 'a reference' : 'references'} to ${shown}, not found, which the text that could not be read may define)` };
  }
  return kept;
}
