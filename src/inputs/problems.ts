/**
 * A problem found in the input: where it is (file, document, line), what it is about (kind/name,
 * field path) and what is wrong. The CLI prints every problem, not only the first.
 */
export interface Problem {
  severity: 'error' | 'warning';
  message: string;
  file?: string;
  /** 1-based index of the YAML document in its file. */
  document?: number;
  line?: number;
  column?: number;
  kind?: string;
  /** `namespace/name` or `name`. */
  name?: string;
  /** Field path in kubectl's style, e.g. `spec.environmentList[0].resources.cpu`. */
  field?: string;
  /**
   * Of a document that could not be parsed: the names it seems to define (its `name:` lines), so
   * references to them are not reported as "not found" besides (src/inputs/load.ts).
   */
  mayDefine?: string[];
}

/** One line per problem; what it echoes from the input (names, fields, values) is escaped. */
export function formatProblem(p: Problem): string {
  let where = p.file ?? '<input>';
  if (p.line !== undefined) where += `:${p.line}${p.column !== undefined ? `:${p.column}` : ''}`;
  const context: string[] = [];
  if (p.document !== undefined) context.push(`document ${p.document}`);
  if (p.kind || p.name) context.push([p.kind, p.name].filter(Boolean).join(' '));
  const ctx = context.length ? ` (${context.join(', ')})` : '';
  const field = p.field ? `${p.field}: ` : '';
  return escapeControl(`${where}${ctx}: ${p.severity}: ${field}${p.message}`);
}

/**
 * Control characters (C0 with tab and newline, DEL, C1), line and paragraph separators, format
 * characters (bidirectional controls, zero widths, BOM, soft hyphen, tags), the other default
 * ignorable code points (variation selectors, Hangul fillers…) and lone surrogates: raw, they let
 * an input forge or hide lines and text on a terminal or in a log (NUL, ESC sequences, CR, a
 * Trojan-Source reordering), or make two names that differ look the same.
 */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

/** `s` with every unsafe character written as `\xNN`, `\uNNNN` or `\u{NNNNN}`. */
export function escapeControl(s: string): string {
  return s.replace(UNSAFE, (c) => {
    const code = c.codePointAt(0)!;
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
    return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

export function hasErrors(problems: readonly Problem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** Turns a JSON pointer (`/spec/environmentList/0/name`) into a field path (`spec.environmentList[0].name`). */
export function pointerToFieldPath(pointer: string): string {
  if (!pointer) return '';
  return pointerSegments(pointer).reduce<string>((acc, seg) => acc + fieldSegment(seg, acc === ''), '');
}

export function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

export function fieldPath(segments: readonly (string | number)[]): string {
  return segments.reduce<string>((acc, seg) => acc + fieldSegment(String(seg), acc === ''), '');
}

function fieldSegment(seg: string, first: boolean): string {
  if (/^\d+$/.test(seg)) return `[${seg}]`;
  if (/^[A-Za-z_$][\w$-]*$/.test(seg)) return first ? seg : `.${seg}`;
  return `[${JSON.stringify(seg)}]`;
}
