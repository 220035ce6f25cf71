// The document pipeline of `crownlabs synth`/`gitops`/`validate`, in process, with the checks every
// fuzz case must pass. Runs in the case worker (pipeline-worker.ts), which the test process can kill
// when a case hangs or blows up memory.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import jsYaml from 'js-yaml';
import { isAlias, isCollection, isPair, isScalar, parseAllDocuments, visit, type Document } from 'yaml';
import { loadInventory } from '../../../src/inputs/load.ts';
import { formatProblem, type Problem } from '../../../src/inputs/problems.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { runGitops } from '../../../src/cli/gitops.ts';
import { LabSession } from '../../../src/compose/incremental.ts';
import { runSynth } from '../../../src/cli/synth.ts';
import { compose, renderAll, type RenderedSet } from '../../../src/compose/compose.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { distFiles } from '../../../src/sinks/files.ts';
import { gitopsFiles, gitopsObject, objectFileName } from '../../../src/sinks/gitops.ts';
import { validateRenderedSets } from '../../../src/validate/validator.ts';
import { CONFIG } from '../../support/cli.ts';
import { baseFiles } from './corpus.ts';
import { materialize, type CaseFiles, type DocCase } from './doc-case.ts';

/** `objects`: of an accepted case, what synth and gitops write (for the API server's verdict, documents.test.ts). */
export type CaseResult = { ok: true; accepted: boolean; objects?: KubeObject[] } | { ok: false; failure: string };

/** A broken property: the message says which and shows the evidence. */
export class Failure extends Error {}

const fail = (message: string): never => {
  throw new Failure(message);
};

// gitops Secret modes differ in what they write; snapshots need a registry to render.
const SECRET_MODES = ['existing', 'external-secret', 'sealed-secret'] as const;
let configs: ComposerConfig[] | undefined;
export function configVariant(i: number): ComposerConfig {
  configs ??= SECRET_MODES.map((mode) => {
    const { config, problems } = loadConfig({ file: CONFIG, env: {}, flags: { vmRegistry: 'registry.example', vmRegistrySecret: 'registry-push', gitopsSecretMode: mode } });
    if (problems.length) throw new Error(`fuzz config: ${problems.map(formatProblem).join('; ')}`);
    return config;
  });
  return configs[i % configs.length];
}

/** Runs an async stage; a rejection out of it is what the CLI reports as "internal error" (exit 70). */
async function stageAsync<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    return fail(`internal error in ${name} (the CLI would exit 70): ${(e as Error)?.stack ?? String(e)}`);
  }
}

/** Runs a stage; an exception out of it is what the CLI reports as "internal error" (exit 70). */
function stage<T>(name: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof Failure) throw e;
    return fail(`internal error in ${name} (the CLI would exit 70): ${(e as Error)?.stack ?? String(e)}`);
  }
}

// C0 controls but tab and newline (NUL, ESC, CR…): printed raw they rewrite a terminal line or a
// log; zero widths, BOM, soft hyphen, word joiners and bidi controls: printed raw they are invisible.
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** Every rejection says where: a document's problem names a line or a field; every problem names a file. */
export function checkProblems(problems: readonly Problem[]): void {
  for (const p of problems) {
    const line = formatProblem(p);
    const control = RAW_CONTROL.exec(line);
    if (control) fail(`a problem prints the control character U+${control[0].charCodeAt(0).toString(16).padStart(4, '0')} raw (#14.16): ${JSON.stringify(line)}`);
    if (p.severity !== 'error') continue;
    if (!p.file) fail(`a rejection names no file: ${JSON.stringify(line)}`);
    if (p.document !== undefined && p.line === undefined && !p.field) fail(`a rejection of a document names neither a line nor a field: ${JSON.stringify(line)}`);
  }
}

const shown = (problems: readonly Problem[]) =>
  problems
    .slice(0, 8)
    .map((p) => `  ${formatProblem(p)}`)
    .join('\n') + (problems.length > 8 ? `\n  … ${problems.length - 8} more` : '');

/** Nodes past which an alias expansion is a bomb whatever a reader's cap (a real lab has thousands). */
const BOMB_NODES = 10_000_000;

/** Nodes a document has once its aliases are expanded (Infinity for a recursive alias), counted up to BOMB_NODES. */
function expandedSize(doc: Document): number {
  const anchors = new Map<string, unknown>();
  const memo = new Map<unknown, number>();
  const active = new Set<unknown>();
  const size = (n: unknown): number => {
    if (isAlias(n)) return anchors.has(n.source) ? size(anchors.get(n.source)) : 1;
    if (!isCollection(n)) {
      if (isScalar(n) && n.anchor) anchors.set(n.anchor, n);
      return 1;
    }
    const known = memo.get(n);
    if (known !== undefined) return known;
    if (active.has(n)) return Infinity;
    if (n.anchor) anchors.set(n.anchor, n);
    active.add(n);
    let total = 1;
    for (const item of n.items) {
      total += isPair(item) ? size(item.key) + size(item.value) : size(item);
      if (total >= BOMB_NODES) break;
    }
    active.delete(n);
    memo.set(n, total);
    return total;
  };
  try {
    return size(doc.contents);
  } catch {
    return 0; // nested too deep to count here: no verdict
  }
}

/** Whether this file is unreadable to the reference readers (invalid UTF-8, malformed YAML, an alias bomb), and why. */
function referenceDefect(bytes: Buffer): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return 'invalid UTF-8';
  }
  // The yaml package reads no bare CR as a line break (YAML 1.2 does): no reference for such text.
  if (/\r(?!\n)/.test(text)) return undefined;
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs)) return undefined;
  for (const doc of docs) {
    if (doc.errors.length) continue;
    const nodes = expandedSize(doc);
    if (nodes === Infinity) return 'a recursive alias (#14.12)';
    if (nodes >= BOMB_NODES) return `an alias bomb of ${BOMB_NODES.toLocaleString('en')}+ nodes once expanded (#14.12)`;
  }
  // Syntax: only what both readers refuse. js-yaml (the reader's first pass) accepts some slightly
  // malformed text the yaml package refuses, and reading it is no failure.
  try {
    jsYaml.loadAll(text, undefined, { schema: jsYaml.CORE_SCHEMA });
    return undefined;
  } catch {
    /* malformed to both: look for why */
  }
  for (const doc of docs) {
    if (doc.errors.length) return `malformed YAML: ${doc.errors[0].message.split('\n')[0]}`;
    const anchors = new Set<string>();
    let unresolved: string | undefined;
    visit(doc, {
      Node(_key, node) {
        if (isAlias(node)) {
          if (!anchors.has(node.source)) unresolved ??= node.source;
        } else if ((node as { anchor?: string }).anchor) anchors.add((node as { anchor: string }).anchor);
      },
    });
    if (unresolved !== undefined) return `unresolved alias *${unresolved}`;
  }
  return undefined;
}

const isReadAsInput = (name: string) => /\.(ya?ml|json)$/.test(name) && !name.startsWith('.');

/** What the case's edits oblige the reader to reject. */
function checkExpectedRejections(made: CaseFiles, errors: readonly Problem[]): void {
  for (const f of made.files) {
    // A file an error names is rejected already (the reference readers cost more than the reader).
    if (!isReadAsInput(f.name) || !f.changed || errors.some((p) => p.file === f.name)) continue;
    const defect = referenceDefect(f.bytes);
    if (defect) {
      fail(`${f.name} is not readable (${defect}) but no error names it${errors.length ? `; the errors:\n${shown(errors)}` : ' (accepted)'}`);
    }
  }
  for (const { file, key } of made.expect.unknownFields) {
    // Named: the error's field is the unknown key, or lies below it (another refusal of its value,
    // e.g. a lone surrogate inside it, is found first and still names the field).
    const bracket = `[${JSON.stringify(key)}]`;
    const names = (field: string) =>
      field.endsWith(key) || field.includes(bracket) || [`${key}.`, `${key}[`].some((below) => field.startsWith(below) || field.includes(`.${below}`));
    const named = errors.some((p) => p.file === file && p.field !== undefined && names(p.field));
    if (!named) fail(`unknown field "${key}" in ${file} is not reported as an error naming it (#14.16)${errors.length ? `; the errors:\n${shown(errors)}` : ' (accepted)'}`);
  }
}

/** JSON view of a value, as a YAML reader gives it back (no undefined, no -0). */
const plain = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

function firstDifference(a: unknown, b: unknown, path = ''): string {
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return `${path || '(root)'}: ${JSON.stringify(a)?.slice(0, 200)} ≠ ${JSON.stringify(b)?.slice(0, 200)}`;
  }
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const k of keys) {
    const x = (a as Record<string, unknown>)[k];
    const y = (b as Record<string, unknown>)[k];
    if (!isDeepStrictEqual(x, y)) return firstDifference(x, y, `${path}.${k}`);
  }
  return `${path || '(root)'}: differ`;
}

function parseBack(name: string, text: string): unknown[] {
  const docs = parseAllDocuments(text, { uniqueKeys: true });
  if (!Array.isArray(docs)) return [];
  return docs.map((d, i) => {
    if (d.errors.length) fail(`emitted ${name} does not parse back (document ${i + 1}): ${d.errors[0].message.split('\n')[0]}`);
    return d.toJS({ maxAliasCount: -1 });
  });
}

/** What the rendered objects are: duplicated (two sets render one object) or invalid (the API server would refuse them). */
function renderedDefects(sets: RenderedSet[]): { duplicate?: string; invalid: Problem[] } {
  const seen = new Map<string, string>();
  let duplicate: string | undefined;
  for (const set of sets) {
    for (const o of set.objects) {
      const key = `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
      const other = seen.get(key);
      if (other !== undefined) duplicate ??= `${key} (rendered by ${other} and ${set.unit.id})`;
      seen.set(key, set.unit.id);
    }
  }
  const validation = stage('validateRenderedSets', () => validateRenderedSets(sets));
  checkProblems(validation.problems);
  return { duplicate, invalid: validation.problems.filter((p) => p.severity === 'error') };
}

/** The YAML each sink writes parses back (yaml package, YAML 1.2) to the objects rendered. */
function checkEmitted(sets: RenderedSet[], config: ComposerConfig, duplicates: boolean): { dist: Map<string, string>; tree: Map<string, string> } {
  const dist = stage('distFiles (YAML emitter)', () => distFiles(sets));
  for (const set of sets) {
    const name = `${set.unit.id}.yaml`;
    const back = parseBack(name, dist.get(name) ?? fail(`synth wrote no ${name}`));
    const want = set.objects.map(plain);
    if (!isDeepStrictEqual(back, want)) {
      fail(`emitted ${name} parses back to other objects: ${back.length !== want.length ? `${back.length} documents for ${want.length} objects` : firstDifference(back, want)}`);
    }
  }

  const tree = stage('gitopsFiles', () => gitopsFiles(sets, config));
  const byBase = new Map<string, unknown[]>();
  for (const [path, content] of tree) {
    if (!path.endsWith('.yaml')) continue;
    const docs = parseBack(`gitops ${path}`, content);
    if (docs.length !== 1) continue;
    byBase.set(basename(path), [...(byBase.get(basename(path)) ?? []), docs[0]]);
  }
  // With two sets rendering one object, one file holds either: the sinks must refuse that (below).
  if (duplicates) return { dist, tree };
  for (const set of sets) {
    // Snapshot Jobs stay out of git (gitops.ts: groupApplications).
    if (set.unit.parent.kind === 'InstanceSnapshot') continue;
    for (const o of set.objects) {
      const g = stage('gitopsObject', () => gitopsObject(o, config));
      if (!g) continue;
      const file = objectFileName(g);
      const want = plain(g);
      const found = byBase.get(basename(file)) ?? [];
      if (!found.some((x) => isDeepStrictEqual(x, want))) {
        fail(`gitops file ${file} does not parse back to the object of ${set.unit.id}: ${found.length ? firstDifference(found[0], want) : 'no such file'}`);
      }
    }
  }
  return { dist, tree };
}

/** The Kubernetes objects of a gitops tree: every YAML file's documents but the kustomizations (build files). */
function treeObjects(tree: Map<string, string>): KubeObject[] {
  const out: KubeObject[] = [];
  for (const [path, content] of tree) {
    if (!path.endsWith('.yaml') || basename(path) === 'kustomization.yaml') continue;
    for (const doc of parseAllDocuments(content)) {
      const o = doc.toJS({ maxAliasCount: -1 }) as KubeObject | null;
      if (o) out.push(o);
    }
  }
  return out;
}

// ----- the two ways the pipeline reads files ----------------------------------------------------

function writeCase(dir: string, files: readonly { name: string; bytes: Buffer }[]): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of files) writeFileSync(join(dir, f.name), f.bytes);
}

interface OneShot {
  problems: Problem[];
  errors: Problem[];
  sets?: RenderedSet[];
}

/** loadInventory → compose → renderAll, as `synth` and `gitops` do. */
function oneShot(dir: string, config: ComposerConfig): OneShot {
  const loaded = stage('loadInventory', () => loadInventory([dir], { cwd: dir }));
  const composition = stage('compose', () => compose(loaded.inventory, config));
  const problems = [...loaded.problems, ...composition.problems];
  checkProblems(problems);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length) return { problems, errors };
  return { problems, errors, sets: stage('renderAll', () => renderAll(composition)) };
}

/**
 * The CLI's own commands, in process, on the case's folder: `synth` and `gitops` to fresh output
 * folders. An exception out of them is the CLI's exit 70.
 */
/**
 * How deep the sinks' output folders sit inside the scratch folder: a path that climbs out of its
 * output folder (an input string holding `../`) still lands inside the scratch folder, where the
 * check below finds it, and never elsewhere on the machine.
 */
const OUT_DEPTH = 64;

/** How many folders above the output folder a relative path reaches (0: it stays inside). */
function climb(path: string): number {
  let depth = 0;
  let lowest = 0;
  for (const seg of path.split(/[/\\]/)) {
    if (seg === '..') lowest = Math.min(lowest, --depth);
    else if (seg && seg !== '.') depth++;
  }
  return path.startsWith('/') ? Infinity : -lowest;
}

async function sinks(dir: string, c: DocCase): Promise<Record<string, number>> {
  const scratch = `${dir}.out`;
  rmSync(scratch, { recursive: true, force: true });
  const out = join(scratch, ...Array<string>(OUT_DEPTH).fill('d'));
  mkdirSync(out, { recursive: true });
  const opts = { file: [dir], config: CONFIG, quiet: true, jobs: 1, vmRegistry: 'registry.example', vmRegistrySecret: 'registry-push', gitopsSecretMode: SECRET_MODES[c.config % SECRET_MODES.length] };
  // The commands print their problems and summaries to stderr; the runner keeps its tail for crashes.
  const codes: Record<string, number> = { synth: await stageAsync('crownlabs synth', () => runSynth({ ...opts, output: join(out, 'dist') })) };
  // gitops costs twice synth: in one case of three (its emitted files are checked in every case above).
  if (c.config % 3 === 0) codes.gitops = await stageAsync('crownlabs gitops', () => runGitops({ ...opts, output: join(out, 'gitops'), debounce: 150 }));
  return codes;
}

/** One case through synth/gitops/validate's path: read, compose, render, emit, and check it all. */
export async function runDocCase(c: DocCase, dir: string): Promise<CaseResult> {
  return guarded(async () => {
    const made = materialize(c);
    writeCase(dir, made.files);
    const config = configVariant(c.config);
    const run = oneShot(dir, config);
    checkExpectedRejections(made, run.errors);
    if (!run.sets) return { ok: true, accepted: false };
    const { duplicate, invalid } = renderedDefects(run.sets);
    const { dist, tree } = checkEmitted(run.sets, config, duplicate !== undefined);
    // Paths of the files the sinks would write, and whether one leaves its output folder.
    const outside: Record<string, string | undefined> = { synth: [...dist.keys()].find((p) => climb(p) > 0), gitops: [...tree.keys()].find((p) => climb(p) > 0) };
    const far = [outside.synth, outside.gitops].find((p) => p !== undefined && climb(p) >= OUT_DEPTH - 1);
    if (far !== undefined) fail(`the sinks would write ${JSON.stringify(far)}, outside their output folder (beyond this harness's scratch folder: not run)`);
    const code = await sinks(dir, c);
    for (const [sink, exit] of Object.entries(code)) {
      if (exit !== 0 && exit !== 1) fail(`crownlabs ${sink} exits ${exit} on this input (0 or 1 expected)`);
      if (exit === 0 && duplicate) fail(`crownlabs ${sink} exits 0 although two resource sets render the same object ${duplicate} (#14.10)`);
      if (exit === 0 && outside[sink] !== undefined) fail(`crownlabs ${sink} exits 0 and wrote ${JSON.stringify(outside[sink])}, outside its output folder (an input namespace holding "../")`);
      if (exit === 0 && invalid.length) fail(`crownlabs ${sink} exits 0 on output the API server would reject (#14.15):\n${shown(invalid)}`);
    }
    if (code.gitops !== undefined && code.synth !== code.gitops) fail(`crownlabs synth exits ${code.synth} but gitops exits ${code.gitops} on the same input`);
    if (code.synth !== 0) return { ok: true, accepted: false };
    return { ok: true, accepted: true, objects: [...run.sets.flatMap((s) => s.objects.map((o) => plain(o) as KubeObject)), ...treeObjects(tree)] };
  });
}

const fingerprint = (sets: readonly RenderedSet[]) => JSON.stringify(sets.map((s) => [s.unit.id, s.objects as KubeObject[]]));

/**
 * `gitops --watch`'s path: the base lab loaded, then the case's files written over it and the
 * session updated. The session must end where a one-shot run of the same files ends: the same
 * sets when it is valid, the last good sets (and an error) when it is not.
 */
export function runWatchCase(c: DocCase, dir: string): Promise<CaseResult> {
  return guarded(() => {
    const config = configVariant(c.config);
    const base = baseFiles(c.base);
    writeCase(dir, base.map((f) => ({ name: f.name, bytes: Buffer.from(f.text) })));
    const session = new LabSession([dir], config, dir);
    const loaded = stage('LabSession.load', () => session.load());
    if (!loaded.applied) fail(`the base lab does not load: ${shown(loaded.problems)}`);
    const before = fingerprint(session.renderedSets());
    const made = materialize(c);
    const changed: string[] = [];
    for (const f of made.files) {
      const path = join(dir, f.name);
      // The watcher passes on only the files the reader takes (gitops.ts: onChange).
      if (!isReadAsInput(f.name)) continue;
      if (!f.changed) continue;
      writeFileSync(path, f.bytes);
      changed.push(path);
    }
    const update = stage('LabSession.update', () => session.update(changed));
    checkProblems(update.problems);
    const after = fingerprint(session.renderedSets());
    const run = oneShot(dir, config);
    if (run.sets === undefined) {
      if (update.applied) fail(`watch mode applied an input a one-shot run rejects (#14.2):\n${shown(run.errors)}`);
      if (after !== before) fail('watch mode changed its sets on an invalid input instead of keeping the last good ones (#14.2)');
      if (!update.problems.some((p) => p.severity === 'error')) fail('watch mode kept the last good tree without reporting an error (#14.2)');
    } else {
      if (!update.applied) fail(`watch mode refused an input a one-shot run accepts:\n${shown(update.problems.filter((p) => p.severity === 'error'))}`);
      if (after !== fingerprint(run.sets)) fail('watch mode rendered other sets than a one-shot run of the same files');
    }
    return { ok: true, accepted: run.sets !== undefined };
  });
}

async function guarded(fn: () => CaseResult | Promise<CaseResult>): Promise<CaseResult> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof Failure) return { ok: false, failure: e.message };
    return { ok: false, failure: `harness error: ${(e as Error)?.stack ?? String(e)}` };
  }
}
