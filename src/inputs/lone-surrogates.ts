import { fieldPath, type Problem } from './problems.ts';

/**
 * A lone UTF-16 surrogate can reach an input string only through an escape (`"\ud800"` in YAML or
 * JSON; file text is decoded UTF-8, which cannot hold one), and no output can carry it: the YAML
 * writers refuse it (src/model/yaml-scalar.ts). Files are checked so that it is an input error
 * naming file, document and field, not a failed render (#14.5).
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]|\\U0000[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The path of the first key or string of `value` that holds a lone surrogate, or undefined. */
export function loneSurrogatePath(value: unknown): (string | number)[] | undefined {
  return findLoneSurrogate(value, [])?.segments;
}

/** False when the text spells no surrogate escape, so that its documents need no walk. */
export function mayHoldLoneSurrogates(text: string): boolean {
  return SURROGATE_ESCAPE.test(text);
}

/**
 * Adds an error for the first key or string of a document that holds a lone surrogate; true when
 * it did (the document is then left out).
 */
export function reportLoneSurrogate(
  value: unknown,
  where: { file: string; document: number; locate?: (pointer: string) => { line: number; column: number } | undefined },
  problems: Problem[],
): boolean {
  const path = findLoneSurrogate(value, []);
  if (!path) return false;
  const { at, segments } = path;
  const pointer = segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
  const code = at.string.charCodeAt(at.index).toString(16).toUpperCase();
  const shown = JSON.stringify(at.string.length > 80 ? `${at.string.slice(0, 80)}…` : at.string);
  const obj = (typeof value === 'object' && value !== null ? value : {}) as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const name = typeof obj.metadata?.name === 'string' ? obj.metadata.name : undefined;
  const namespace = typeof obj.metadata?.namespace === 'string' ? obj.metadata.namespace : undefined;
  problems.push({
    severity: 'error',
    file: where.file,
    document: where.document,
    kind: typeof obj.kind === 'string' ? obj.kind : undefined,
    name: name && namespace ? `${namespace}/${name}` : name,
    ...(where.locate?.(pointer) ?? {}),
    field: fieldPath(segments),
    message: `${at.isKey ? 'the key ' : ''}${shown} holds a lone UTF-16 surrogate (U+${code}), which no UTF-8 output can carry`,
  });
  return true;
}

type Found = { segments: (string | number)[]; at: { string: string; index: number; isKey: boolean } };

function findLoneSurrogate(v: unknown, segments: (string | number)[]): Found | undefined {
  if (typeof v === 'string') {
    const m = LONE_SURROGATE.exec(v);
    return m ? { segments, at: { string: v, index: m.index, isKey: false } } : undefined;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const found = findLoneSurrogate(v[i], [...segments, i]);
      if (found) return found;
    }
  } else if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const m = LONE_SURROGATE.exec(k);
      if (m) return { segments: [...segments, k], at: { string: k, index: m.index, isKey: true } };
      const found = findLoneSurrogate(x, [...segments, k]);
      if (found) return found;
    }
  }
  return undefined;
}
