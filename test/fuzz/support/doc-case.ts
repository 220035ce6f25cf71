// A document fuzz case is a small plan (base lab, object-level edits, text-level edits), turned into
// files here. Plans stay small and printable (fast-check shows them on a failure); big values are
// markers ({$huge}, {$deep}) expanded only when the files are made.
import { parseAllDocuments, stringify } from 'yaml';
import { baseFiles, type BaseName } from './corpus.ts';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A value an object edit puts somewhere; markers expand to big values when the files are made. */
export type Value = Json | { $huge: number; ch: string } | { $deep: number; as: 'list' | 'map' };

export type ObjectOp =
  | { op: 'delete'; doc: number; at: number }
  | { op: 'set'; doc: number; at: number; value: Value }
  /** Replaces one of the document's strings (keeps its type, so the schema often still holds). */
  | { op: 'setString'; doc: number; at: number; value: string }
  | { op: 'renameKey'; doc: number; at: number; key: string }
  /** An unknown field at the root or in spec: the reader must reject it, naming it. */
  | { op: 'unknownField'; doc: number; where: 'root' | 'spec'; key: string; value: Json }
  /** A second copy of a document: same name, the name with '.'/'-' swapped, or a new suffix. */
  | { op: 'clone'; doc: number; rename: 'same' | 'dotdash' | 'suffix' }
  | { op: 'longName'; doc: number; length: number }
  /** The document's namespace renamed, everywhere it is named, to one that is no DNS label (`..`, `/`, upper case, too long). */
  | { op: 'namespace'; doc: number; value: string }
  | { op: 'deleteDoc'; doc: number }
  /**
   * Gives the n-th environment of the lab's Templates other valid settings (type, mode, GUI, …): the
   * combinations the base lab lacks, e.g. a Standalone without GUI in mode Exam (no Service port).
   */
  | { op: 'environment'; env: number; settings: EnvironmentSettings }
  /** Sets a resource of the n-th environment to an edge quantity (0, 1 byte, 2^63 bytes, beyond int64…). */
  | { op: 'resource'; env: number; field: 'cpu' | 'memory' | 'disk' | 'reservedCPUPercentage'; value: string | number };

export interface EnvironmentSettings {
  environmentType?: 'VirtualMachine' | 'CloudVM' | 'Container' | 'Standalone';
  mode?: 'Standard' | 'Exam' | 'Exercise';
  guiEnabled?: boolean;
  persistent?: boolean;
  rewriteURL?: boolean;
  mountMyDriveVolume?: boolean;
}

export type TextOp =
  | { op: 'insert'; file: number; at: number; text: string }
  | { op: 'insertBytes'; file: number; at: number; bytes: readonly number[] }
  | { op: 'cut'; file: number; at: number; length: number }
  | { op: 'dupLine'; file: number; line: number }
  | { op: 'swapLines'; file: number; a: number; b: number }
  /** Replaces the value of the n-th `key: value` line. */
  | { op: 'value'; file: number; line: number; value: TextValue }
  /**
   * Adds a `key: value` line beside the n-th one (same indentation): a new field, maybe one nothing
   * reads; `metadata`: beside the n-th `metadata.name` (a field no reader checks).
   */
  | { op: 'sibling'; file: number; line: number; key: string; value: TextValue; beside?: 'metadata' }
  | { op: 'truncate'; file: number; at: number }
  | { op: 'whole'; file: number; how: 'crlf' | 'cr' | 'bom' | 'tabs' | 'nel-breaks' | 'ls-breaks' | 'yaml11-directive' | 'empty' | 'comment-only' | 'doc-end-markers' }
  | { op: 'extraFile'; name: string; content: string | readonly number[] };

export type TextValue =
  | { kind: 'plain' | 'double' | 'single'; text: string }
  | { kind: 'unresolved-alias' }
  /** An anchor here and an alias to it in the next value line of the same file. */
  | { kind: 'anchor-alias' }
  /** An alias bomb: `width` aliases per level, `depth` levels (width^depth nodes once expanded). */
  | { kind: 'bomb'; width: number; depth: number; as: 'list' | 'map' }
  /** A collection that contains an alias to itself (a cycle once read). */
  | { kind: 'recursive-alias'; as: 'list' | 'map' }
  | { kind: 'deep'; depth: number; as: 'list' | 'map' }
  | { kind: 'huge'; size: number; ch: string }
  | { kind: 'tag'; tag: string }
  | { kind: 'merge-key' }
  | { kind: 'number'; text: string };

export interface DocCase {
  base: BaseName;
  /** Index into the config variants (secret modes of the gitops sink). */
  config: number;
  /** Per file, how an edited file is written back: YAML (block) or JSON documents. */
  style: 'yaml' | 'json';
  objectOps: readonly ObjectOp[];
  textOps: readonly TextOp[];
}

/** What the pipeline must do with a case, besides never failing internally. */
export interface Expectations {
  /** Unknown fields added: the reader must reject each, naming the field (`field` ends with the key). */
  unknownFields: { file: string; key: string }[];
}

export interface CaseFiles {
  /** Every file; `changed` when the case made it differ from its base file. */
  files: { name: string; bytes: Buffer; changed: boolean }[];
  expect: Expectations;
}

interface DocRef {
  file: number;
  docs: unknown[];
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export function expandValue(value: Value): unknown {
  const v = value as any;
  if (isMap(v) && typeof v.$huge === 'number') return String(v.ch || 'x').repeat(v.$huge);
  if (isMap(v) && typeof v.$deep === 'number') {
    let out: unknown = 'bottom';
    for (let i = 0; i < v.$deep; i++) out = v.as === 'map' ? { d: out } : [out];
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => expandValue(x as Value));
  if (isMap(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, expandValue(x as Value)]));
  return v;
}

interface Slot {
  parent: Record<string, unknown> | unknown[];
  key: string | number;
  up?: Slot;
}

const pathOf = (slot: Slot): (string | number)[] => {
  const path: (string | number)[] = [];
  for (let s: Slot | undefined = slot; s; s = s.up) path.unshift(s.key);
  return path;
};

/** Every value slot of a document (its container and key), depth first; iterative, as values may nest thousands deep. */
function slots(doc: unknown): Slot[] {
  const out: Slot[] = [];
  const childrenOf = (v: unknown, up?: Slot): Slot[] =>
    Array.isArray(v) ? v.map((_, i) => ({ parent: v, key: i, up })) : isMap(v) ? Object.keys(v).map((k) => ({ parent: v, key: k, up })) : [];
  const stack = childrenOf(doc).reverse();
  while (stack.length) {
    const slot = stack.pop()!;
    out.push(slot);
    stack.push(...childrenOf((slot.parent as Record<string | number, unknown>)[slot.key], slot).reverse());
  }
  return out;
}

function nameOf(doc: unknown): string | undefined {
  const meta = isMap(doc) && isMap(doc.metadata) ? doc.metadata : undefined;
  return typeof meta?.name === 'string' ? meta.name : undefined;
}

export type InPlaceEdit = Extract<ObjectOp, { op: 'setString' | 'delete' | 'set' | 'renameKey' }>;

/** Edits one value of a document in place: the n-th (mod their count) of its slots or strings; returns its path. */
export function editInPlace(doc: unknown, op: InPlaceEdit): (string | number)[] | undefined {
  const all = slots(doc);
  const s = op.op === 'setString' ? all.filter(({ parent, key }) => typeof (parent as Record<string | number, unknown>)[key] === 'string') : all;
  if (s.length === 0) return undefined;
  const slot = s[op.at % s.length];
  const { parent, key } = slot;
  const path = pathOf(slot);
  if (op.op === 'setString') (parent as Record<string | number, unknown>)[key] = op.value;
  else if (op.op === 'set') (parent as Record<string | number, unknown>)[key] = expandValue(op.value);
  else if (Array.isArray(parent)) {
    if (op.op === 'delete') parent.splice(key as number, 1);
  } else if (op.op === 'delete') delete parent[key as string];
  else if (op.key !== key) {
    // Rename in place, keeping the key order.
    const entries = Object.entries(parent).map(([k, v]) => [k === key ? op.key : k, v] as const);
    for (const k of Object.keys(parent)) delete parent[k];
    for (const [k, v] of entries) parent[k] = v;
  }
  return path;
}

/** The environments of every Template of the lab, with the file each is in. */
function environments(flat: { ref: DocRef; index: number }[]): { file: number; env: Record<string, unknown> }[] {
  const out: { file: number; env: Record<string, unknown> }[] = [];
  for (const { ref, index } of flat) {
    const doc = ref.docs[index];
    const list = isMap(doc) && doc.kind === 'Template' && isMap(doc.spec) ? doc.spec.environmentList : undefined;
    if (Array.isArray(list)) for (const env of list) if (isMap(env)) out.push({ file: ref.file, env });
  }
  return out;
}

function applyObjectOp(flat: { ref: DocRef; index: number }[], op: ObjectOp, expect: Expectations, fileNames: string[], oracles: boolean): Set<number> {
  const touched = new Set<number>();
  if (flat.length === 0) return touched;
  if (op.op === 'environment' || op.op === 'resource') {
    const envs = environments(flat);
    if (envs.length === 0) return touched;
    const { file, env } = envs[op.env % envs.length];
    touched.add(file);
    if (op.op === 'environment') Object.assign(env, op.settings);
    else env.resources = { ...(isMap(env.resources) ? env.resources : {}), [op.field]: op.value };
    return touched;
  }
  const { ref, index } = flat[op.doc % flat.length];
  const doc = ref.docs[index];
  touched.add(ref.file);
  switch (op.op) {
    case 'setString':
    case 'delete':
    case 'set':
    case 'renameKey':
      editInPlace(doc, op);
      break;
    case 'unknownField': {
      if (!isMap(doc)) break;
      const target = op.where === 'spec' && isMap(doc.spec) ? doc.spec : doc;
      if (op.key in target) break;
      target[op.key] = op.value;
      // Checked only when nothing else changed the case (another edit may hide or remove it).
      if (oracles) expect.unknownFields.push({ file: fileNames[ref.file], key: op.key });
      break;
    }
    case 'clone': {
      const copy = structuredClone(doc);
      const name = nameOf(copy);
      if (name !== undefined && isMap(copy) && isMap(copy.metadata)) {
        if (op.rename === 'dotdash') copy.metadata.name = name.includes('-') ? name.replaceAll('-', '.') : name.replaceAll('.', '-');
        else if (op.rename === 'suffix') copy.metadata.name = `${name}-x${index}`;
      }
      ref.docs.splice(index + 1, 0, copy);
      break;
    }
    case 'longName': {
      const name = nameOf(doc);
      if (name !== undefined && isMap(doc) && isMap(doc.metadata)) {
        const stem = name.replace(/[^a-z0-9-]/g, '-');
        doc.metadata.name = (stem + '-' + 'a'.repeat(op.length)).slice(0, Math.max(op.length, 1)).replace(/-+$/, 'z');
      }
      break;
    }
    case 'namespace': {
      const from = isMap(doc) && isMap(doc.metadata) ? doc.metadata.namespace : undefined;
      if (typeof from !== 'string') break;
      // Every document naming it follows (its Secrets, references to it), so the lab stays whole.
      for (const other of flat) {
        for (const { parent, key } of slots(other.ref.docs[other.index])) {
          const p = parent as Record<string | number, unknown>;
          if (p[key] === from) {
            p[key] = op.value;
            touched.add(other.ref.file);
          }
        }
      }
      break;
    }
    case 'deleteDoc':
      ref.docs.splice(index, 1);
      break;
  }
  return touched;
}

const json = (docs: unknown[]) => docs.map((d) => JSON.stringify(d) ?? 'null').join('\n---\n') + '\n';

function serialize(docs: unknown[], style: DocCase['style']): string {
  if (style === 'json') return json(docs);
  try {
    return docs.map((d) => stringify(d, { lineWidth: 0, aliasDuplicateObjects: true })).join('---\n');
  } catch {
    return json(docs); // nesting too deep for the yaml package's writer; JSON is YAML too
  }
}

// ----- text edits ------------------------------------------------------------------------------

const VALUE_LINE = /^(\s*(?:- )?)([^\s#'"{[\-][^:#]*?):[ ]+(\S.*)$/;

function valueLines(lines: string[]): number[] {
  const out: number[] = [];
  lines.forEach((l, i) => VALUE_LINE.test(l) && out.push(i));
  return out;
}

function bomb(width: number, depth: number, as: 'list' | 'map'): string {
  // Anchors are defined inside the value before their aliases: one flow collection holds it all.
  const levels: string[] = [];
  for (let d = 0; d < depth; d++) {
    const items = Array.from({ length: width }, (_, i) => (d === 0 ? 'lol' : `*fz${d - 1}`));
    levels.push(as === 'map' ? `&fz${d} {${items.map((x, i) => `k${i}: ${x}`).join(', ')}}` : `&fz${d} [${items.join(', ')}]`);
  }
  return as === 'map' ? `{${levels.map((l, i) => `l${i}: ${l}`).join(', ')}}` : `[${levels.join(', ')}]`;
}

function renderValue(v: TextValue): string {
  switch (v.kind) {
    case 'plain':
      return v.text;
    case 'double':
      return JSON.stringify(v.text);
    case 'single':
      return `'${v.text.replaceAll("'", "''")}'`;
    case 'unresolved-alias':
      return '*fuzz-undefined';
    case 'anchor-alias':
      return ''; // handled by the caller
    case 'bomb':
      return bomb(v.width, v.depth, v.as);
    case 'recursive-alias':
      return v.as === 'map' ? '&fzr {a: *fzr}' : '&fzr [x, *fzr]';
    case 'deep':
      return v.as === 'map' ? `${'{a: '.repeat(v.depth)}x${'}'.repeat(v.depth)}` : `${'['.repeat(v.depth)}x${']'.repeat(v.depth)}`;
    case 'huge':
      return JSON.stringify((v.ch || 'x').repeat(v.size));
    case 'tag':
      return `${v.tag} x`;
    case 'merge-key':
      return '{<<: *fuzz-undefined}';
    case 'number':
      return v.text;
  }
}

function applyTextOp(texts: (string | Buffer)[], names: string[], op: TextOp): void {
  if (op.op === 'extraFile') {
    const content = typeof op.content === 'string' ? op.content : Buffer.from(op.content);
    const at = names.indexOf(op.name);
    if (at >= 0) texts[at] = content;
    else names.push(op.name), texts.push(content);
    return;
  }
  const i = op.file % texts.length;
  const cur = texts[i];
  if (op.op === 'insertBytes') {
    const bytes = Buffer.isBuffer(cur) ? cur : Buffer.from(cur, 'utf8');
    const at = op.at % (bytes.length + 1);
    texts[i] = Buffer.concat([bytes.subarray(0, at), Buffer.from(op.bytes), bytes.subarray(at)]);
    return;
  }
  // Text edits on a file already made binary work on its latin1 view (bytes kept as they are).
  const binary = Buffer.isBuffer(cur);
  const text = binary ? cur.toString('latin1') : cur;
  const done = (t: string) => (texts[i] = binary ? Buffer.from(t, 'latin1') : t);
  const lines = text.split('\n');
  switch (op.op) {
    case 'insert': {
      const at = op.at % (text.length + 1);
      done(text.slice(0, at) + (binary ? Buffer.from(op.text).toString('latin1') : op.text) + text.slice(at));
      return;
    }
    case 'cut': {
      const at = op.at % (text.length + 1);
      done(text.slice(0, at) + text.slice(at + op.length));
      return;
    }
    case 'truncate':
      done(text.slice(0, op.at % (text.length + 1)));
      return;
    case 'dupLine': {
      const n = op.line % lines.length;
      lines.splice(n, 0, lines[n]);
      done(lines.join('\n'));
      return;
    }
    case 'swapLines': {
      const a = op.a % lines.length;
      const b = op.b % lines.length;
      [lines[a], lines[b]] = [lines[b], lines[a]];
      done(lines.join('\n'));
      return;
    }
    case 'value': {
      const candidates = valueLines(lines);
      if (candidates.length === 0) {
        done(`${text}\nfuzz: ${renderValue(op.value)}\n`);
        return;
      }
      const k = op.line % candidates.length;
      const n = candidates[k];
      const [, indent, key, value] = VALUE_LINE.exec(lines[n])!;
      if (op.value.kind === 'anchor-alias') {
        lines[n] = `${indent}${key}: &fzanchor ${value}`;
        const next = candidates[(k + 1) % candidates.length];
        const m = VALUE_LINE.exec(lines[next])!;
        lines[next] = `${m[1]}${m[2]}: *fzanchor`;
      } else lines[n] = `${indent}${key}: ${renderValue(op.value)}`;
      done(lines.join('\n'));
      return;
    }
    case 'sibling': {
      const names = op.beside === 'metadata' ? valueLines(lines).filter((i) => /^ {2}name: /.test(lines[i])) : [];
      const candidates = names.length ? names : valueLines(lines);
      const n = candidates.length ? candidates[op.line % candidates.length] : lines.length - 1;
      const indent = candidates.length ? VALUE_LINE.exec(lines[n])![1].replace('- ', '  ') : '';
      const value = op.value.kind === 'anchor-alias' ? '&fzanchor x' : renderValue(op.value);
      lines.splice(n + 1, 0, `${indent}${op.key}: ${value}`);
      done(lines.join('\n'));
      return;
    }
    case 'whole':
      switch (op.how) {
        case 'crlf':
          return void done(text.replaceAll('\n', '\r\n'));
        case 'cr':
          return void done(text.replaceAll('\n', '\r'));
        case 'bom':
          return void done(`\ufeff${text}`);
        case 'tabs':
          return void done(text.replace(/^( {2})+/gm, (m) => '\t'.repeat(m.length / 2)));
        case 'nel-breaks':
          return void done(text.replaceAll('\n', '\u0085'));
        case 'ls-breaks':
          return void done(text.replaceAll('\n', '\u2028'));
        case 'yaml11-directive':
          return void done(`%YAML 1.1\n---\n${text}`);
        case 'empty':
          return void done('');
        case 'comment-only':
          return void done(text.replace(/^/gm, '# '));
        case 'doc-end-markers':
          return void done(text.replaceAll('\n---\n', '\n...\n---\n'));
      }
  }
}

const parsed = new Map<BaseName, unknown[][]>();
function parsedBase(base: BaseName): unknown[][] {
  let docs = parsed.get(base);
  if (!docs) parsed.set(base, (docs = baseFiles(base).map((f) => parseAllDocuments(f.text).map((d) => d.toJS()))));
  return docs;
}

/** The files of a case, and what the pipeline must report about them. */
export function materialize(c: DocCase): CaseFiles {
  const base = baseFiles(c.base);
  const names = base.map((f) => f.name);
  const expect: Expectations = { unknownFields: [] };
  let texts: (string | Buffer)[] = base.map((f) => f.text);
  if (c.objectOps.length > 0) {
    const refs: DocRef[] = parsedBase(c.base).map((docs, file) => ({ file, docs: structuredClone(docs) }));
    const touched = new Set<number>();
    for (const op of c.objectOps) {
      const flat = refs.flatMap((ref) => ref.docs.map((_, index) => ({ ref, index })));
      for (const f of applyObjectOp(flat, op, expect, names, c.objectOps.length === 1 && c.textOps.length === 0)) touched.add(f);
    }
    texts = texts.map((t, i) => (touched.has(i) ? serialize(refs[i].docs, c.style) : t));
  }
  for (const op of c.textOps) applyTextOp(texts, names, op);
  return {
    files: texts.map((t, i) => ({ name: names[i], bytes: Buffer.isBuffer(t) ? t : Buffer.from(t, 'utf8'), changed: t !== base[i]?.text })),
    expect,
  };
}
