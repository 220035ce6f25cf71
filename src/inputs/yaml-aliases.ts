import { isAlias, isCollection, isMap, isNode, isPair, isScalar, isSeq, Scalar, type Document, type Node } from 'yaml';

/**
 * Most values the aliases of one file may add once expanded. A "billion laughs" document of a
 * few hundred bytes expands to 10^9 values; real inputs add a few per alias.
 */
export const MAX_ALIAS_VALUES = 100_000;

export interface AliasIssue {
  /** Offset of the alias in the text. */
  offset: number;
  message: string;
}

class Stop {
  constructor(readonly issue: AliasIssue) {}
}

/**
 * Replaces every alias of `doc` by the node it names, checking on the way that it names
 * an anchor set before it (outside itself), and that the values all aliases add stay within
 * `budget.remaining` (shared by the documents of one file). The document then converts to plain
 * values in time linear in its expanded size (the `yaml` package resolves each alias by a scan of
 * the document). A merge key (`<<`) must take a mapping or a list of them. The first issue is
 * returned and the document is left half-expanded.
 */
export function expandAliases(doc: Document, budget: { remaining: number }): AliasIssue | undefined {
  const anchors = new Map<string, Node>();
  const sizes = new Map<Node, number>();
  const open = new Set<Node>();
  // Returns the node to keep in place of `node` and how many values it stands for.
  const visit = (node: unknown): [unknown, number] => {
    if (!isNode(node)) return [node, 1];
    if (isAlias(node)) {
      const offset = node.range?.[0] ?? 0;
      const target = anchors.get(node.source);
      if (!target) throw new Stop({ offset, message: `unknown alias *${node.source} (an anchor &${node.source} must come before it)` });
      if (open.has(target)) throw new Stop({ offset, message: `alias *${node.source} is inside the node it names` });
      const size = sizes.get(target)!;
      budget.remaining -= size;
      if (budget.remaining < 0) {
        throw new Stop({ offset, message: `aliases expand this file by more than ${MAX_ALIAS_VALUES} values (an alias bomb?)` });
      }
      // The node itself, not a copy (copies are slow): toJS converts it anew at every place.
      return [target, size];
    }
    // A later anchor of the same name shadows an earlier one from here on, as in YAML.
    if (node.anchor) anchors.set(node.anchor, node);
    let size = 1;
    if (isCollection(node)) {
      open.add(node);
      const items = node.items as unknown[];
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (isPair(item)) {
          const [key, keySize] = visit(item.key);
          const [value, valueSize] = visit(item.value);
          item.key = key;
          item.value = value;
          size += keySize + valueSize;
          if (isMergeKey(key) && !mergeable(value)) {
            throw new Stop({ offset: (key as Node).range?.[0] ?? 0, message: 'a merge key (<<) takes a mapping, an alias of one or a list of them' });
          }
        } else {
          const [value, valueSize] = visit(item);
          items[i] = value;
          size += valueSize;
        }
      }
      open.delete(node);
    }
    sizes.set(node, size);
    return [node, size];
  };
  try {
    doc.contents = visit(doc.contents)[0] as Document['contents'];
  } catch (err) {
    if (err instanceof Stop) return err.issue;
    throw err;
  }
  return undefined;
}

/** A plain `<<` key, which the reader (option `merge`) takes as a YAML merge key. */
function isMergeKey(key: unknown): boolean {
  return isScalar(key) && (key.type === undefined || key.type === Scalar.PLAIN) && (key.value === '<<' || (typeof key.value === 'symbol' && key.value.description === '<<'));
}

/** What a merge key may take (aliases are expanded by then). */
function mergeable(value: unknown): boolean {
  return isMap(value) || (isSeq(value) && value.items.every((i) => isMap(i)));
}
