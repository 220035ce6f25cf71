/**
 * The last check before a migrated object is written: it is read as an input at e62be9e (envelope,
 * schema, names, amounts: src/inputs/parse.ts), on a copy, so the CRD defaults it applies are not
 * written. The mapping should leave nothing for it to find; it is the net under the mapping.
 */
import { checkObject, type Source } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import type { KubeObject } from '../inputs/types.ts';

export function e62be9eProblems(after: KubeObject, source: Pick<Source, 'file' | 'document' | 'strict' | 'item'>): Problem[] {
  const problems: Problem[] = [];
  checkObject(structuredClone(after), { file: source.file, document: source.document, strict: source.strict }, problems, [], source.item !== undefined ? `items[${source.item}]` : '', 'e62be9e');
  return problems.map((p) => ({ ...p, message: `after migration, at e62be9e: ${p.message}` }));
}
