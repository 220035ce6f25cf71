import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import jsYaml from 'js-yaml';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { isOutputFolder } from '../output-marker.ts';
import { CROWNLABS_CRD_PREFIX, loadCrdVersions } from './crd-schemas.ts';
import { pointerSegments, type Problem } from './problems.ts';
import { SchemaValidator } from './schema-validator.ts';
import { INPUT_KINDS, objectKey, type InputKind, type InputObject } from './types.ts';

/** Where an input object came from, so problems about it can name the file, document and line. */
export interface Source {
  file: string;
  /** 1-based document index within the file. */
  document: number;
  /** Resolves a JSON pointer inside the object to a line/column of the file, when known. */
  locate?: (pointer: string) => { line: number; column: number } | undefined;
}

export interface SourcedObject {
  object: InputObject;
  source: Source;
}

export interface ParsedInput {
  objects: SourcedObject[];
  problems: Problem[];
  files: string[];
}

const YAML_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

let validator: SchemaValidator | undefined;
function crownlabsValidator(): SchemaValidator {
  validator ??= new SchemaValidator(loadCrdVersions([CROWNLABS_CRD_PREFIX]));
  return validator;
}

/** Expands files and folders (recursively, sorted) into the YAML/JSON files they hold. */
export function expandInputPaths(paths: readonly string[]): { files: string[]; problems: Problem[] } {
  const files: string[] = [];
  const problems: Problem[] = [];
  const walk = (p: string, explicit: boolean) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      problems.push({ severity: 'error', file: p, message: 'no such file or folder' });
      return;
    }
    if (st.isDirectory()) {
      // A folder crownlabs wrote (synth/gitops output) is never input.
      if (isOutputFolder(p)) {
        if (explicit) problems.push({ severity: 'error', file: p, message: 'is an output folder of crownlabs (it holds .crownlabs-output), not input' });
        return;
      }
      for (const entry of readdirSync(p).sort()) {
        if (entry.startsWith('.')) continue;
        walk(join(p, entry), false);
      }
    } else if (explicit || YAML_EXTENSIONS.has(extname(p))) {
      files.push(p);
    }
  };
  for (const p of paths) walk(p, true);
  return { files: [...new Set(files)], problems };
}

/** Reads, parses and validates input files and folders. Every problem is collected. */
export function readInputs(paths: readonly string[], cwd = process.cwd()): ParsedInput {
  const { files, problems } = expandInputPaths(paths);
  const objects: SourcedObject[] = [];
  for (const file of files) {
    const shown = relative(cwd, file) || file;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      problems.push({ severity: 'error', file: shown, message: `cannot read: ${(err as Error).message}` });
      continue;
    }
    const parsed = parseInputText(text, shown);
    objects.push(...parsed.objects);
    problems.push(...parsed.problems);
  }
  return { objects, problems, files };
}

/**
 * Parses one file's text: multi-document YAML (or JSON), `v1/List` documents expanded.
 * js-yaml (YAML 1.2 core schema, as the `yaml` package reads it) does the reading, several times
 * faster; the `yaml` package, which keeps source positions, parses the file again only when a
 * problem needs a line number, or when js-yaml cannot read it (to report the YAML error well).
 */
export function parseInputText(text: string, file: string): { objects: SourcedObject[]; problems: Problem[] } {
  let values: unknown[];
  try {
    values = jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA });
  } catch {
    return parseInputTextWithPositions(text, file);
  }
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  let positioned: { docs: Document[]; lineCounter: LineCounter } | undefined;
  const docAt = (i: number) => {
    if (!positioned) {
      const lineCounter = new LineCounter();
      const parsed = parseAllDocuments(text, { lineCounter, prettyErrors: false });
      positioned = { docs: Array.isArray(parsed) ? parsed : [], lineCounter };
    }
    // Both readers count documents alike; if they ever disagree, report without a line.
    return positioned.docs.length === values.length ? { doc: positioned.docs[i], lineCounter: positioned.lineCounter } : undefined;
  };
  values.forEach((value, i) => {
    if (value === null || value === undefined) return;
    const document = i + 1;
    const locateIn = (prefix: (string | number)[]) => (pointer: string) => {
      const at = docAt(i);
      return at ? locate(at.doc, at.lineCounter, [...prefix, ...pointerSegments(pointer)]) : undefined;
    };
    if (isObject(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, j) => checkObject(item, { file, document, locate: locateIn(['items', j]) }, problems, objects, `items[${j}]`));
      return;
    }
    checkObject(value, { file, document, locate: locateIn([]) }, problems, objects);
  });
  return { objects, problems };
}

function parseInputTextWithPositions(text: string, file: string): { objects: SourcedObject[]; problems: Problem[] } {
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  if (!Array.isArray(docs)) {
    // An empty stream parses to an EmptyStream; nothing to read.
    return { objects, problems };
  }
  docs.forEach((doc, i) => {
    const document = i + 1;
    const at = (offset: number | undefined) => {
      if (offset === undefined) return {};
      const pos = lineCounter.linePos(offset);
      return { line: pos.line, column: pos.col };
    };
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        problems.push({ severity: 'error', file, document, ...at(e.pos[0]), message: `malformed YAML: ${firstLine(e.message)}` });
      }
      return;
    }
    const value = doc.toJS({ maxAliasCount: 100 }) as unknown;
    if (value === null || value === undefined) return;
    const locateIn = (prefix: (string | number)[]) => (pointer: string) => locate(doc, lineCounter, [...prefix, ...pointerSegments(pointer)]);
    if (isObject(value) && value.kind === 'List' && Array.isArray(value.items)) {
      value.items.forEach((item, j) => {
        const src: Source = { file, document, locate: locateIn(['items', j]) };
        checkObject(item, src, problems, objects, `items[${j}]`);
      });
      return;
    }
    checkObject(value, { file, document, locate: locateIn([]) }, problems, objects);
  });
  return { objects, problems };
}

/**
 * Checks one object's envelope (apiVersion, kind, metadata) and, for CrownLabs kinds, its schema
 * (applying the CRD defaults in place). Used for files and for objects read from the API server.
 */
export function checkObject(
  value: unknown,
  source: Source,
  problems: Problem[],
  objects: SourcedObject[],
  itemPrefix = '',
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
  if (!known) {
    problems.push({
      ...about,
      ...pos('/kind'),
      field: prefixed('kind'),
      message: `unknown kind "${kind}" (expected one of ${Object.keys(INPUT_KINDS).join(', ')})`,
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
  } else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) {
    problems.push({ ...about, ...pos('/metadata/name'), field: prefixed('metadata.name'), message: `"${name}" is not a valid name (lower-case RFC 1123 subdomain)` });
    ok = false;
  }
  if (known.namespaced && !namespace) {
    problems.push({ ...about, ...pos('/metadata'), field: prefixed('metadata.namespace'), message: `required for the namespaced kind ${kind}` });
    ok = false;
  } else if (!known.namespaced && namespace) {
    problems.push({ ...about, ...pos('/metadata/namespace'), field: prefixed('metadata.namespace'), message: `${kind} is cluster-scoped and takes no namespace` });
    ok = false;
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta?.[field];
    if (map === undefined) continue;
    if (!isObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      problems.push({ ...about, ...pos(`/metadata/${field}`), field: prefixed(`metadata.${field}`), message: 'must map strings to strings' });
      ok = false;
    }
  }
  const v = crownlabsValidator();
  const crd = v.find(apiVersion, kind);
  if (crd) {
    for (const issue of v.validate(crd, value)) {
      problems.push({ ...about, ...pos(issue.pointer), field: prefixed(issue.field), message: issue.message });
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}

export { objectKey };
