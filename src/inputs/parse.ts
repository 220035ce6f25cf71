import { lstatSync, readdirSync, statfsSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import jsYaml from 'js-yaml';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { amountProblems } from './amounts.ts';
import { legacyCpuWarning, readLegacyCpu } from './legacy-cpu.ts';
import { CORE_INPUT_SCHEMAS } from './core-schemas.ts';
import { isDns1123Label, isDns1123Subdomain, isLabelValue, isQualifiedName } from './k8s-names.ts';
import { isOutputFolder } from '../output-marker.ts';
import { crownlabsCrdsDir, DEFAULT_API_LEVEL, kindExistsAt, LEVEL_ONLY_KINDS, type ApiLevel } from './api-level.ts';
import { CROWNLABS_CRD_PREFIX, loadCrdVersions } from './crd-schemas.ts';
import { mayHoldLoneSurrogates, reportLoneSurrogate } from './lone-surrogates.ts';
import { fileType, readInputFile, STDIN_NAME, STDIN_PATH, type ReadResult } from './input-file.ts';
import { pointerSegments, pointerToFieldPath, type Problem } from './problems.ts';
import { SchemaValidator, UNKNOWN_FIELD } from './schema-validator.ts';
import { INPUT_KINDS, objectKey, type InputKind, type InputObject } from './types.ts';
import { expandAliases, MAX_ALIAS_VALUES } from './yaml-aliases.ts';

/** Where an input object came from, so problems about it can name the file, document and line. */
export interface Source {
  file: string;
  /** 1-based document index within the file. */
  document: number;
  /**
   * Unknown fields are errors everywhere (input files). Without it (objects read from the API
   * server) fields of core kinds and metadata unknown to the vendored schemas are let through:
   * a newer server may have them, and ignoring its Namespaces would be worse.
   */
  strict?: boolean;
  /** Resolves a JSON pointer inside the object to a line/column of the file, when known. */
  locate?: (pointer: string) => { line: number; column: number } | undefined;
  /** The object's index in its document's `v1/List`, when it came from one. */
  item?: number;
}

export interface SourcedObject {
  object: InputObject;
  source: Source;
}

export interface ReadOptions {
  /** Shown file names are relative to it (default: the working folder). */
  cwd?: string;
  /** Most bytes one input file may hold (config `inputMaxFileSize`; default 16 MiB). */
  maxFileBytes?: number;
  /** Standard input, read beforehand (src/inputs/input-file.ts, readStdin), for the path `-`. */
  stdin?: ReadResult;
  /** Files parsed before, by name and text (src/cache/parse-cache.ts). */
  memo?: ParseMemo;
  /** Files this run read already, by path (the run record's): parsed as read then, not read again. */
  texts?: ReadonlyMap<string, ReadResult>;
  /** The CrownLabs API level whose schemas the objects must follow (config `apiLevel`). */
  level?: ApiLevel;
}

/** What parsing one file's text gave. */
export interface ParsedText {
  objects: SourcedObject[];
  problems: Problem[];
  /** The number of YAML documents, when js-yaml read the text (no anchors): then `sourceLocator` rebuilds `locate`. */
  documents?: number;
}

/** A store of parsed files: an unchanged file (same name, same text) is not parsed again. */
export interface ParseMemo {
  get(shown: string, text: string): ParsedText | undefined;
  set(shown: string, text: string, parsed: ParsedText): void;
}

export interface ParsedInput {
  objects: SourcedObject[];
  problems: Problem[];
  files: string[];
}

const YAML_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

const validators = new Map<ApiLevel, SchemaValidator>();
/** A level's CrownLabs CRDs and the core kinds of the input (Namespace, Secret). */
function inputValidator(level: ApiLevel): SchemaValidator {
  let v = validators.get(level);
  if (!v) validators.set(level, (v = new SchemaValidator([...loadCrdVersions([CROWNLABS_CRD_PREFIX], crownlabsCrdsDir(level)), ...CORE_INPUT_SCHEMAS])));
  return v;
}

/**
 * Expands files and folders (recursively, sorted) into the YAML/JSON files they hold. Only regular
 * files are read: a FIFO, device or socket named on the command line is an error, one found in a
 * folder is skipped with a warning; a folder reached again through a symbolic link is not read twice.
 * Folders on a pseudo file system (/proc, /sys…) are not walked, and the walk stops with an error
 * past `maxEntries` entries in all.
 * `-` stands for standard input (once).
 */
export function expandInputPaths(paths: readonly string[], maxEntries = MAX_FOLDER_ENTRIES): { files: string[]; problems: Problem[] } {
  const files: string[] = [];
  const problems: Problem[] = [];
  let entriesLeft = maxEntries;
  let stopped = false;
  // Files and folders by device and inode (bigint: inode numbers may exceed 2^53).
  const seenFiles = new Set<string>();
  const walked = new Set<string>();
  const walk = (p: string, explicit: boolean, ancestors: readonly string[]) => {
    if (explicit && p === STDIN_PATH) {
      if (files.includes(STDIN_PATH)) problems.push({ severity: 'error', file: STDIN_NAME, message: 'named twice: standard input can be read only once' });
      else files.push(STDIN_PATH);
      return;
    }
    let st;
    try {
      st = statSync(p, { bigint: true });
    } catch (err) {
      // In a folder, only what would be read (a YAML/JSON name) is an error.
      const error = explicit || YAML_EXTENSIONS.has(extname(p));
      problems.push({ severity: error ? 'error' : 'warning', file: p, message: `${statFailure(p, err as NodeJS.ErrnoException)}${error ? '' : ': skipped'}` });
      return;
    }
    const id = `${st.dev}:${st.ino}`;
    if (st.isDirectory()) {
      // A folder crownlabs wrote (synth/gitops output) is never input.
      if (isOutputFolder(p)) {
        if (explicit) problems.push({ severity: 'error', file: p, message: 'is an output folder of crownlabs (it holds .crownlabs-output), not input' });
        return;
      }
      if (ancestors.includes(id)) {
        problems.push({ severity: 'warning', file: p, message: 'symbolic link loop (this folder is inside itself): skipped' });
        return;
      }
      if (walked.has(id)) return;
      walked.add(id);
      const special = specialFileSystem(p);
      if (special) {
        problems.push({ severity: explicit ? 'error' : 'warning', file: p, message: `is on the ${special} file system, which holds no input (it can be endless): ${explicit ? 'not read' : 'skipped'}` });
        return;
      }
      let entries: string[];
      try {
        entries = readdirSync(p).sort();
      } catch (err) {
        problems.push({ severity: 'error', file: p, message: `cannot read folder: ${(err as Error).message}` });
        return;
      }
      for (const entry of entries) {
        if (stopped) return;
        if (entry.startsWith('.')) continue;
        if (--entriesLeft < 0) {
          stopped = true;
          problems.push({ severity: 'error', file: p, message: `the input folders hold more than ${maxEntries.toLocaleString('en')} entries: stopped reading here (is -f the lab's folder?)` });
          return;
        }
        walk(join(p, entry), false, [...ancestors, id]);
      }
    } else if (explicit || YAML_EXTENSIONS.has(extname(p))) {
      if (!st.isFile()) {
        problems.push({ severity: explicit ? 'error' : 'warning', file: p, message: `not a regular file (${fileType(st)}): ${explicit ? 'not read' : 'skipped'}` });
      } else if (!seenFiles.has(id)) {
        seenFiles.add(id);
        files.push(p);
      }
    }
  };
  for (const p of paths) walk(p, true, []);
  return { files, problems };
}

/** Most folder entries the inputs' folders may hold in all: a lab has hundreds, `-f /` millions. */
export const MAX_FOLDER_ENTRIES = 200_000;

/**
 * Linux pseudo file systems (statfs magic numbers): their folders are views of the kernel, with
 * links back to `/` (`/proc/<pid>/root`) and files that never end; no lab lives there.
 */
const SPECIAL_FILE_SYSTEMS = new Map<number, string>([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x6165676c, 'pstore'],
  [0x1cd1, 'devpts'],
  [0x65735543, 'fusectl'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
]);

/** The name of the pseudo file system folder `p` is on, if it is on one. */
function specialFileSystem(p: string): string | undefined {
  try {
    return SPECIAL_FILE_SYSTEMS.get(Number(statfsSync(p).type));
  } catch {
    return undefined; // no statfs here: the walk's other bounds still hold
  }
}

function statFailure(p: string, err: NodeJS.ErrnoException): string {
  if (err.code === 'ELOOP') return 'symbolic link loop';
  if (err.code !== 'ENOENT') return `cannot read: ${err.message}`;
  try {
    lstatSync(p);
    return 'broken symbolic link (its target does not exist)';
  } catch {
    return 'no such file or folder';
  }
}

/** Reads, parses and validates input files and folders. Every problem is collected. */
export function readInputs(paths: readonly string[], options: ReadOptions = {}): ParsedInput {
  const { files, problems } = expandInputPaths(paths);
  const cwd = options.cwd ?? process.cwd();
  const objects: SourcedObject[] = [];
  for (const file of files) {
    const parsed = parseInputFile(file, file === STDIN_PATH ? STDIN_NAME : relative(cwd, file) || file, options);
    objects.push(...parsed.objects);
    problems.push(...parsed.problems);
  }
  return { objects, problems, files };
}

/**
 * Reads and parses one input file, shown in problems as `shown`. `missing` tells a file that is
 * not there (any more) from one that cannot be read.
 */
export function parseInputFile(file: string, shown: string, options: ReadOptions = {}): { objects: SourcedObject[]; problems: Problem[]; missing?: true } {
  const read: ReadResult =
    file === STDIN_PATH
      ? (options.stdin ?? { ok: false, reason: 'unreadable', message: 'standard input was not read' })
      : (options.texts?.get(file) ?? readInputFile(file, options.maxFileBytes));
  if (!read.ok) {
    const problem: Problem = { severity: 'error', file: shown, ...(read.line ? { line: read.line } : {}), message: read.message };
    return { objects: [], problems: [problem], ...(read.reason === 'missing' ? { missing: true as const } : {}) };
  }
  const hit = options.memo?.get(shown, read.text);
  if (hit) return hit;
  const parsed = parseInputText(read.text, shown, options.level);
  options.memo?.set(shown, read.text, parsed);
  return parsed;
}

/**
 * `locate` for the objects of a text js-yaml read into `documents` documents: the `yaml` package
 * parses the text (once, on the first call) for positions. Both readers count documents alike;
 * if they ever disagree, problems are reported without a line.
 */
export function sourceLocator(text: string, documents: number): (document: number, prefix: (string | number)[]) => (pointer: string) => { line: number; column: number } | undefined {
  let positioned: { docs: Document[]; lineCounter: LineCounter } | undefined;
  const docAt = (i: number) => {
    if (!positioned) {
      const lineCounter = new LineCounter();
      const parsed = parseAllDocuments(text, { lineCounter, ...YAML_OPTIONS });
      positioned = { docs: Array.isArray(parsed) ? parsed : [], lineCounter };
    }
    return positioned.docs.length === documents ? { doc: positioned.docs[i], lineCounter: positioned.lineCounter } : undefined;
  };
  return (document, prefix) => (pointer) => {
    const at = docAt(document - 1);
    return at ? locate(at.doc, at.lineCounter, [...prefix, ...pointerSegments(pointer)]) : undefined;
  };
}

/**
 * An anchor (`&name`) can only start a node: at the start of the text or after white space, a
 * flow indicator or a flow `:`. Text without one has no aliases either (an alias to nothing fails).
 */
const MAY_HAVE_ANCHOR = /(?:^|[\s,[{:\uFEFF])&/;
/** A YAML merge key (`<<: *base`), which js-yaml's core schema reads as a plain key: the `yaml` package merges it. */
const MAY_HAVE_MERGE_KEY = /<<\s*:/;

/**
 * Merge keys are read as kubectl (go-yaml) and upstream read them: `<<: *base` (or a list of
 * aliases, or a mapping) adds the keys the mapping does not have itself.
 */
const YAML_OPTIONS = { prettyErrors: false, merge: true } as const;

/**
 * Parses one file's text: multi-document YAML (or JSON), `v1/List` documents expanded.
 * js-yaml (YAML 1.2 core schema, as the `yaml` package reads it) does the reading, several times
 * faster; the `yaml` package, which keeps source positions, parses the file again only when a
 * problem needs a line number, or when js-yaml cannot read it (to report the YAML error well).
 * Text with anchors or merge keys goes to the `yaml` package directly: js-yaml shares aliased values, and
 * whatever walks them later (a diff, a schema check) would pay for every alias of an alias bomb;
 * there the aliases are checked and expanded first (./yaml-aliases.ts).
 */
export function parseInputText(text: string, file: string, level: ApiLevel = DEFAULT_API_LEVEL): ParsedText {
  if (MAY_HAVE_ANCHOR.test(text) || MAY_HAVE_MERGE_KEY.test(text)) return parseInputTextWithPositions(text, file, level);
  let values: unknown[];
  try {
    values = jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA });
  } catch {
    return parseInputTextWithPositions(text, file, level);
  }
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  const checkSurrogates = mayHoldLoneSurrogates(text);
  const locator = sourceLocator(text, values.length);
  values.forEach((value, i) => {
    if (value === null || value === undefined) return;
    const document = i + 1;
    if (checkSurrogates && reportLoneSurrogate(value, { file, document, locate: locator(document, []) }, problems)) return;
    if (isObject(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, j) => checkObject(item, { file, document, strict: true, locate: locator(document, ['items', j]), item: j }, problems, objects, `items[${j}]`, level));
      return;
    }
    checkObject(value, { file, document, strict: true, locate: locator(document, []) }, problems, objects, '', level);
  });
  return { objects, problems, documents: values.length };
}

function parseInputTextWithPositions(text: string, file: string, level: ApiLevel): { objects: SourcedObject[]; problems: Problem[] } {
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  const lineCounter = new LineCounter();
  const at = (offset: number | undefined) => {
    if (offset === undefined) return {};
    const pos = lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  };
  let docs: ReturnType<typeof parseAllDocuments>;
  try {
    docs = parseAllDocuments(text, { lineCounter, ...YAML_OPTIONS });
  } catch (err) {
    // The parser's own limits (e.g. nesting deeper than the stack).
    problems.push({ severity: 'error', file, message: `malformed YAML: ${firstLine((err as Error).message)}` });
    return { objects, problems };
  }
  if (!Array.isArray(docs)) {
    // An empty stream parses to an EmptyStream; nothing to read.
    return { objects, problems };
  }
  const aliasBudget = { remaining: MAX_ALIAS_VALUES };
  docs.forEach((doc, i) => {
    const document = i + 1;
    if (doc.errors.length > 0) {
      // The parser's later errors in a document mostly follow from its first (a tab, a bad indent).
      const [first, ...rest] = doc.errors;
      const more = rest.length ? ` (${rest.length} more YAML ${rest.length === 1 ? 'error' : 'errors'} in this document may follow from it)` : '';
      problems.push({ severity: 'error', file, document, ...at(first.pos[0]), message: `malformed YAML: ${firstLine(first.message)}${more}`, mayDefine: namesIn(doc.range ? text.slice(doc.range[0], doc.range[2]) : text) });
      return;
    }
    let value: unknown;
    try {
      const aliasIssue = expandAliases(doc, aliasBudget);
      if (aliasIssue) {
        problems.push({ severity: 'error', file, document, ...at(aliasIssue.offset), message: aliasIssue.message });
        return;
      }
      // Aliases are expanded and counted already.
      value = doc.toJS({ maxAliasCount: -1 });
    } catch (err) {
      problems.push({ severity: 'error', file, document, ...at(doc.range?.[0]), message: `malformed YAML: ${firstLine((err as Error).message)}` });
      return;
    }
    if (value === null || value === undefined) return;
    const locateIn = (prefix: (string | number)[]) => (pointer: string) => locate(doc, lineCounter, [...prefix, ...pointerSegments(pointer)]);
    if (mayHoldLoneSurrogates(text) && reportLoneSurrogate(value, { file, document, locate: locateIn([]) }, problems)) return;
    if (isObject(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, j) => {
        const src: Source = { file, document, strict: true, locate: locateIn(['items', j]), item: j };
        checkObject(item, src, problems, objects, `items[${j}]`, level);
      });
      return;
    }
    checkObject(value, { file, document, strict: true, locate: locateIn([]) }, problems, objects, '', level);
  });
  return { objects, problems };
}

/**
 * Checks one object's envelope (apiVersion, kind, metadata) and its schema (a CrownLabs kind's CRD,
 * ./core-schemas.ts for Namespace and Secret), applying the CRD defaults in place. Used for files
 * and for objects read from the API server.
 */
export function checkObject(
  value: unknown,
  source: Source,
  problems: Problem[],
  objects: SourcedObject[],
  itemPrefix = '',
  level: ApiLevel = DEFAULT_API_LEVEL,
): void {
  const base = { severity: 'error' as const, file: source.file, document: source.document };
  const pos = (pointer: string) => source.locate?.(pointer) ?? source.locate?.('') ?? {};
  const prefixed = (field: string) => (itemPrefix ? (field ? `${itemPrefix}.${field}` : itemPrefix) : field);
  if (!isObject(value)) {
    problems.push({ ...base, ...pos(''), field: prefixed(''), message: 'a document must be a Kubernetes object (a mapping)' });
    return;
  }
  const kind = value.kind;
  const apiVersion = value.apiVersion;
  if (typeof kind !== 'string' || typeof apiVersion !== 'string') {
    problems.push({ ...base, ...pos(''), field: prefixed(typeof kind !== 'string' ? 'kind' : 'apiVersion'), message: 'required value is missing' });
    return;
  }
  const meta = isObject(value.metadata) ? value.metadata : undefined;
  const name = typeof meta?.name === 'string' ? meta.name : undefined;
  const namespace = typeof meta?.namespace === 'string' ? meta.namespace : undefined;
  const shownName = name ? (namespace ? `${namespace}/${name}` : name) : undefined;
  const about = { ...base, kind, name: shownName };
  const known = INPUT_KINDS[kind as InputKind];
  if (!known || !kindExistsAt(kind, level)) {
    const kinds = Object.keys(INPUT_KINDS).filter((k) => kindExistsAt(k, level));
    const elsewhere = known ? ` at API level ${level}; it exists at ${LEVEL_ONLY_KINDS[kind]!.join(', ')} (config apiLevel)` : '';
    problems.push({
      ...about,
      ...pos('/kind'),
      field: prefixed('kind'),
      message: `unknown kind "${kind}"${elsewhere} (expected one of ${kinds.join(', ')})`,
    });
    return;
  }
  if (apiVersion !== known.apiVersion) {
    problems.push({ ...about, ...pos('/apiVersion'), field: prefixed('apiVersion'), message: `${kind} must have apiVersion ${known.apiVersion}, not "${apiVersion}"` });
    return;
  }
  let ok = true;
  if (!name) {
    problems.push({ ...about, ...pos('/metadata'), field: prefixed('metadata.name'), message: 'required value is missing' });
    ok = false;
  } else if (!isDns1123Subdomain(name)) {
    problems.push({ ...about, ...pos('/metadata/name'), field: prefixed('metadata.name'), message: `"${name}" is not a valid name (lower-case RFC 1123 subdomain)` });
    ok = false;
  }
  if (known.namespaced && !namespace) {
    problems.push({ ...about, ...pos('/metadata'), field: prefixed('metadata.namespace'), message: `required for the namespaced kind ${kind}` });
    ok = false;
  } else if (!known.namespaced && namespace) {
    problems.push({ ...about, ...pos('/metadata/namespace'), field: prefixed('metadata.namespace'), message: `${kind} is cluster-scoped and takes no namespace` });
    ok = false;
  } else if (namespace && !isDns1123Label(namespace)) {
    // Namespaces become folder names of every sink's output: "../x" must never reach a path.
    problems.push({ ...about, ...pos('/metadata/namespace'), field: prefixed('metadata.namespace'), message: `${JSON.stringify(namespace)} is not a valid namespace (lower-case RFC 1123 label, at most 63 characters)` });
    ok = false;
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta?.[field];
    if (map === undefined) continue;
    if (!isObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      problems.push({ ...about, ...pos(`/metadata/${field}`), field: prefixed(`metadata.${field}`), message: 'must map strings to strings' });
      ok = false;
      continue;
    }
    // What the API server refuses on the object itself: such an input cannot exist in a cluster.
    for (const [key, value] of Object.entries(map)) {
      // Located only for a problem: a position parses the file a second time.
      const at = () => {
        const pointer = `/metadata/${field}/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        return { ...about, ...pos(pointer), field: prefixed(pointerToFieldPath(pointer)) };
      };
      if (!isQualifiedName(key)) {
        problems.push({ ...at(), message: `${JSON.stringify(key)} is not a valid ${field === 'labels' ? 'label' : 'annotation'} key (an optional DNS subdomain prefix and "/", then a name of at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric)` });
        ok = false;
      } else if (field === 'labels' && !isLabelValue(value as string)) {
        problems.push({ ...at(), message: `${JSON.stringify(value)} is not a valid label value (at most 63 characters: alphanumerics, '-', '_' or '.', starting and ending with an alphanumeric, or empty)` });
        ok = false;
      }
    }
  }
  // A stored string cpu (e62be9e) is read as upstream's operators read it, before the schema sees it.
  const legacy = readLegacyCpu(kind, value, level);
  for (const c of legacy) problems.push({ ...about, severity: 'warning', ...pos(c.pointer), field: prefixed(pointerToFieldPath(c.pointer)), message: legacyCpuWarning(c) });
  // Its floor may be 0, under the schema's minimum: the operators read it all the same.
  const floored = new Set(legacy.filter((c) => c.cores < 1).map((c) => c.pointer));
  const v = inputValidator(level);
  const crd = v.find(apiVersion, kind);
  if (crd) {
    for (const issue of v.validate(crd, value)) {
      if (!source.strict && issue.message === UNKNOWN_FIELD && (crd.group === '' || issue.pointer.startsWith('/metadata/'))) continue;
      if (floored.has(issue.pointer)) continue;
      problems.push({ ...about, ...pos(issue.pointer), field: prefixed(issue.field), message: issue.message });
      ok = false;
    }
  }
  if (ok) {
    // Amounts of CPU, memory, disk and quotas the API server refuses once rendered, or a VM could not start with.
    for (const { pointer, message } of amountProblems(kind, value)) {
      problems.push({ ...about, ...pos(pointer), field: prefixed(pointer.slice(1).replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/\//g, '.')), message });
      ok = false;
    }
  }
  if (ok) objects.push({ object: value as unknown as InputObject, source });
}

function locate(doc: Document, lc: LineCounter, path: (string | number)[]): { line: number; column: number } | undefined {
  // Walk up until a node that exists (a missing field is reported at its parent).
  for (let n = path.length; n >= 0; n--) {
    const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    if (node && typeof node === 'object' && node.range) {
      const pos = lc.linePos(node.range[0]);
      return { line: pos.line, column: pos.col };
    }
  }
  return undefined;
}

/** The values of the `name:` lines of text that does not parse (what the document seems to define). */
function namesIn(text: string): string[] {
  return [...new Set([...text.matchAll(/^[\t -]*name:[\t ]*["']?([^\s"'#,{}[\]]+)/gm)].map((m) => m[1]))];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}

export { objectKey };
