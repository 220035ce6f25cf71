// Model-based test of `gitops --watch`: random sequences of edits of a small lab on disk (objects
// added, removed, renamed; YAML broken and fixed; files moved, copied then deleted, emptied,
// symlinked), each followed by a quiet period, after which the watched tree must equal a fresh
// render of the disk as it is, or the last good tree when that disk is invalid.
import { cpSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import fc from 'fast-check';
import jsYaml from 'js-yaml';
import { loadInventory } from '../../../src/inputs/load.ts';
import { formatProblem, hasErrors } from '../../../src/inputs/problems.ts';
import { LabSession } from '../../../src/compose/incremental.ts';
import type { ComposerConfig } from '../../../src/config/config.ts';
import { compose, renderUnit, type RenderedSet } from '../../../src/compose/compose.ts';
import { checkSetObjects, parentSource, renderedSetProblems } from '../../../src/compose/prewrite.ts';
import { instanceNameProblems } from '../../../src/model/instance-names.ts';
import { tenantNamespaceName } from '../../../src/model/naming.ts';
import { gitopsFiles, GitopsTreeBuilder } from '../../../src/sinks/gitops.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { folderFiles, watchProcess } from '../../support/watch-process.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { withMarker } from '../../../src/sinks/atomic-tree.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Doc = any;

/** One edit; numbers pick their target among what is on disk then (modulo). */
export type Op =
  | { op: 'toggle-running' | 'remove-doc' | 'rename-doc' | 'edit-template'; file: number; doc: number }
  | { op: 'add-instance'; file: number; tenant: number; template: number }
  | { op: 'add-tenant'; file: number; workspace: number }
  | { op: 'break-yaml' | 'fix-yaml' | 'empty-file' | 'rewrite-same'; file: number }
  | { op: 'move-file' | 'copy-then-delete' | 'symlink'; file: number; to: number }
  | { op: 'move-doc'; file: number; doc: number; to: number }
  | { op: 'unlink-symlink'; link: number }
  | { op: 'edit-outside'; doc: number }
  | { op: 'batch'; ops: Op[] };

const FOLDERS = ['a', 'b', 'b/c'] as const;
/** What a broken file ends with: an unclosed flow sequence. */
const BROKEN = 'oops: [\n';

const leaf = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constantFrom('toggle-running', 'remove-doc', 'rename-doc', 'edit-template'), file: fc.nat(), doc: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('add-instance'), file: fc.nat(), tenant: fc.nat(), template: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('add-tenant'), file: fc.nat(), workspace: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('break-yaml', 'fix-yaml', 'empty-file', 'rewrite-same'), file: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constantFrom('move-file', 'copy-then-delete', 'symlink'), file: fc.nat(), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('move-doc'), file: fc.nat(), doc: fc.nat(), to: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('unlink-symlink'), link: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('edit-outside'), doc: fc.nat() }) },
) as fc.Arbitrary<Op>;

/** 30 to 40 edits; some come together, as within one debounce window. */
export const opSequence: fc.Arbitrary<Op[]> = fc.array(fc.oneof({ weight: 6, arbitrary: leaf }, { weight: 1, arbitrary: fc.record({ op: fc.constant('batch' as const), ops: fc.array(leaf, { minLength: 2, maxLength: 3 }) }) }), { minLength: 30, maxLength: 40 });

interface FileModel {
  docs: Doc[];
  broken: boolean;
}

/** A step's result: the paths a watcher reports (its events), and whether anything changed on disk. */
export interface Step {
  events: string[];
  /** The edit, for the failure message. */
  what: string;
  /** The step's change when it is not made by `apply` itself (the delete of a copy-then-delete comes later). */
  run?: () => void;
}

/**
 * The lab on disk: `root` is watched; `outside` holds files only reached through symbolic links.
 * `files` is its own view of the regular files it wrote (rel → docs), which the ops pick from.
 */
export class LabOnDisk {
  readonly files = new Map<string, FileModel>();
  readonly links = new Map<string, string>();
  private counter = 0;

  constructor(
    readonly root: string,
    readonly outside: string,
  ) {
    for (const f of FOLDERS) mkdirSync(join(root, f), { recursive: true });
    mkdirSync(outside, { recursive: true });
    const generated = generateLab({ workspaces: 1, tenants: 3, instances: 4 });
    // Only the Templates the Instances use (fewer sets: a faster fresh render).
    const used = new Set(generated.flatMap((o) => (o.kind === 'Instance' ? [(o.spec as Doc)['template.crownlabs.polito.it/TemplateRef'].name] : [])));
    const lab = generated.filter((o) => o.kind !== 'Template' || used.has(o.metadata.name));
    const put = (rel: string, doc: Doc) => {
      const m = this.files.get(rel) ?? { docs: [], broken: false };
      m.docs.push(doc);
      this.files.set(rel, m);
    };
    for (const o of lab) {
      if (o.kind === 'Instance') put(`a/instances-${o.metadata.namespace}.yaml`, o);
      else if (o.kind === 'Tenant') put(o.metadata.name === 'user.2' ? 'b/tenants.yaml' : 'a/tenants.yaml', o);
      else put(o.kind === 'Template' ? 'b/c/templates.yaml' : 'a/workspaces.yaml', o);
    }
    for (const rel of this.files.keys()) this.write(rel);
    // A Template file outside the watched folder, linked in.
    writeFileSync(join(outside, 'extra-templates.yaml'), dump([{ ...structuredClone(lab.find((o) => o.kind === 'Template')!), metadata: { name: 'outside-0', namespace: 'workspace-ws-0' } }]));
    symlinkSync(join(outside, 'extra-templates.yaml'), join(root, 'a', 'extra-templates.yaml'));
    this.links.set('a/extra-templates.yaml', join(outside, 'extra-templates.yaml'));
  }

  /** Applies one op (a batch: all of them) to the disk; copy-then-delete is two steps. */
  apply(op: Op): Step[] {
    if (op.op === 'batch') {
      // One debounce window: every part made now.
      const steps = op.ops.flatMap((o) => {
        const parts = this.apply(o);
        for (const s of parts) s.run?.();
        return parts;
      });
      return steps.length ? [{ events: [...new Set(steps.flatMap((s) => s.events))], what: `batch(${steps.map((s) => s.what).join('; ')})` }] : [];
    }
    const rels = [...this.files.keys()].sort();
    if (rels.length === 0 && op.op !== 'unlink-symlink' && op.op !== 'edit-outside') return [];
    const rel = rels[('file' in op ? op.file : 0) % Math.max(1, rels.length)];
    const m = this.files.get(rel)!;
    const path = (r: string) => join(this.root, r);
    const one = (what: string, ...events: string[]): Step[] => [{ events: events.map(path), what }];
    const pick = (docs: Doc[], i: number) => (docs.length ? docs[i % docs.length] : undefined);
    const all = () => [...this.files.values()].flatMap((f) => f.docs);
    switch (op.op) {
      case 'toggle-running': {
        const d = pick(m.docs.filter((x) => x.kind === 'Instance'), op.doc);
        if (!d) return [];
        d.spec.running = !d.spec.running;
        this.write(rel);
        return one(`toggle running of ${d.metadata.name} in ${rel}`, rel);
      }
      case 'remove-doc': {
        const d = pick(m.docs, op.doc);
        if (!d) return [];
        m.docs.splice(m.docs.indexOf(d), 1);
        this.write(rel);
        return one(`remove ${d.kind} ${d.metadata.name} from ${rel}`, rel);
      }
      case 'rename-doc': {
        const d = pick(m.docs, op.doc);
        if (!d) return [];
        d.metadata.name = `${d.metadata.name.slice(0, 20)}-r${this.counter++}`;
        this.write(rel);
        return one(`rename ${d.kind} to ${d.metadata.name} in ${rel}`, rel);
      }
      case 'edit-template': {
        const d = pick(m.docs.filter((x) => x.kind === 'Template'), op.doc);
        if (!d) return [];
        const r = d.spec.environmentList[0].resources;
        r.memory = r.memory === '2Gi' ? '3Gi' : '2Gi';
        this.write(rel);
        return one(`edit Template ${d.metadata.name} in ${rel}`, rel);
      }
      case 'add-instance': {
        const tenant = pick(all().filter((x) => x.kind === 'Tenant'), op.tenant);
        const template = pick(all().filter((x) => x.kind === 'Template'), op.template);
        if (!tenant || !template) return [];
        m.docs.push({
          apiVersion: 'crownlabs.polito.it/v1alpha2',
          kind: 'Instance',
          metadata: { name: `new-${this.counter++}`, namespace: tenantNamespaceName(tenant.metadata.name) },
          spec: {
            'template.crownlabs.polito.it/TemplateRef': { name: template.metadata.name, namespace: template.metadata.namespace },
            'tenant.crownlabs.polito.it/TenantRef': { name: tenant.metadata.name },
            running: true,
          },
        });
        this.write(rel);
        return one(`add Instance new-${this.counter - 1} to ${rel}`, rel);
      }
      case 'add-tenant': {
        const name = `student.${this.counter++}`;
        m.docs.push({
          apiVersion: 'crownlabs.polito.it/v1alpha2',
          kind: 'Tenant',
          metadata: { name, labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
          spec: { firstName: 'New', lastName: 'Student', email: `${name}@example.com`, workspaces: [{ name: 'ws-0', role: op.workspace % 3 === 0 ? 'manager' : 'user' }], publicKeys: [] },
        });
        this.write(rel);
        return one(`add Tenant ${name} to ${rel}`, rel);
      }
      case 'break-yaml':
      case 'fix-yaml':
      case 'empty-file':
      case 'rewrite-same': {
        if (op.op === 'break-yaml') m.broken = true;
        if (op.op === 'fix-yaml') {
          if (!m.broken) return [];
          m.broken = false;
        }
        if (op.op === 'empty-file') m.docs = [];
        this.write(rel);
        return one(`${op.op} ${rel}`, rel);
      }
      case 'move-file':
      case 'copy-then-delete': {
        const to = this.elsewhere(rel, op.to);
        if (to === undefined) return [];
        if (op.op === 'move-file') {
          renameSync(path(rel), path(to));
          this.files.delete(rel);
          this.files.set(to, m);
          return one(`move ${rel} to ${to}`, rel, to);
        }
        cpSync(path(rel), path(to));
        this.files.set(to, structuredClone(m));
        const run = () => {
          rmSync(path(rel));
          this.files.delete(rel);
        };
        return [...one(`copy ${rel} to ${to}`, to), { ...one(`then delete ${rel}`, rel)[0], run }];
      }
      case 'symlink': {
        const to = this.elsewhere(rel, op.to, 'link-');
        if (to === undefined) return [];
        symlinkSync(path(rel), path(to));
        this.links.set(to, path(rel));
        return one(`symlink ${to} -> ${rel}`, to);
      }
      case 'move-doc': {
        const d = pick(m.docs, op.doc);
        const target = rels[op.to % rels.length];
        if (!d || target === rel) return [];
        m.docs.splice(m.docs.indexOf(d), 1);
        this.files.get(target)!.docs.push(d);
        this.write(rel);
        this.write(target);
        return one(`move ${d.kind} ${d.metadata.name} from ${rel} to ${target}`, rel, target);
      }
      case 'unlink-symlink': {
        const links = [...this.links.keys()].sort();
        if (!links.length) return [];
        const link = links[op.link % links.length];
        rmSync(path(link));
        this.links.delete(link);
        return one(`remove symlink ${link}`, link);
      }
      case 'edit-outside': {
        // The linked file outside the watched folder: no event names it (the link's may come).
        const file = join(this.outside, 'extra-templates.yaml');
        const docs = jsYaml.loadAll(readFileSync(file, 'utf8')) as Doc[];
        const r = docs[0].spec.environmentList[0].resources;
        r.cpu = r.cpu === 2 ? 3 : 2;
        writeFileSync(file, dump(docs));
        return [{ events: [], what: `edit ${file} (outside, linked in)` }];
      }
    }
  }

  /** A free path for `rel`'s name in another folder (`prefix` before its name), if any. */
  private elsewhere(rel: string, to: number, prefix = ''): string | undefined {
    const folders = FOLDERS.filter((f) => f !== dirname(rel));
    const target = join(folders[to % folders.length], prefix + rel.split('/').pop()!);
    return taken(join(this.root, target)) ? undefined : target;
  }

  private write(rel: string): void {
    const m = this.files.get(rel)!;
    writeFileSync(join(this.root, rel), dump(m.docs) + (m.broken ? BROKEN : ''));
  }
}

/** Whether anything (a file, a link, even a broken one) is at `p`. */
function taken(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

const dump = (docs: readonly Doc[]) => docs.map((d) => `---\n${jsYaml.dump(d)}`).join('');

/**
 * What a fresh one-shot `gitops` renders from `root` now (path → content, without the marker), or
 * undefined when it refuses the input: read, validated, composed, rendered and checked the way a
 * one-shot run does (src/cli/gitops-render.ts, renderTree), not through the watch session.
 */
export function freshRender(root: string, config: ComposerConfig): Map<string, string> | undefined {
  const loaded = loadInventory([root], { cwd: root, maxFileBytes: config.inputMaxFileSize });
  const problems = [...loaded.problems, ...instanceNameProblems(loaded.inventory)];
  if (hasErrors(problems)) return undefined;
  const composition = compose(loaded.inventory, config, { secretValues: false });
  if (hasErrors(composition.problems)) return undefined;
  const sets: RenderedSet[] = composition.units.map((unit) => ({ unit, objects: renderUnit(unit) }));
  const checked = renderedSetProblems(
    sets.map((s) => ({ unit: s.unit, check: checkSetObjects(s.objects) })),
    (parent) => parentSource(loaded.inventory, parent),
  );
  if (hasErrors(checked)) return undefined;
  return gitopsFiles(sets, config);
}

/** The first difference between two trees, in words (or undefined when equal). */
export function treeDifference(actual: ReadonlyMap<string, string>, expected: ReadonlyMap<string, string>): string | undefined {
  for (const [f, text] of expected) {
    if (!actual.has(f)) return `missing ${f}`;
    if (actual.get(f) !== text) return `differs: ${f}`;
  }
  for (const f of actual.keys()) if (!expected.has(f)) return `extra ${f}`;
  return undefined;
}

/**
 * A sequence through the watch session in process, as `gitops --watch` drives it (each step's
 * events, objects released after each tree): after each step the tree must be the fresh render of
 * the disk, or the last good tree (and no update applied) when the disk is invalid.
 */
export function runInProcess(ops: readonly Op[], config: ComposerConfig, scratch: string): void {
  const root = join(scratch, 'lab');
  const lab = new LabOnDisk(root, join(scratch, 'outside'));
  try {
    const session = new LabSession([root], config, root, { secretValues: false });
    const builder = new GitopsTreeBuilder(config);
    const loaded = session.load();
    if (!loaded.applied) throw new Error(`the base lab does not load: ${loaded.problems.map(formatProblem).join('\n')}`);
    let good = builder.files(session.renderedSets());
    session.releaseObjects();
    const done: string[] = [];
    for (const op of ops) {
      for (const step of lab.apply(op)) {
        step.run?.();
        done.push(step.what);
        const update = session.update(step.events, { emptiedMayApply: () => true });
        const tree = builder.files(session.renderedSets());
        session.releaseObjects();
        const expected = freshRender(root, config);
        const fail = (what: string) => {
          throw new Error(`after step ${done.length} (${step.what}): ${what}\nsteps:\n${done.map((s, i) => `  ${i + 1}. ${s}`).join('\n')}`);
        };
        if (expected === undefined) {
          if (update.applied) fail('the session applied an input a one-shot run refuses');
          const d = treeDifference(tree, good);
          if (d) fail(`the disk is invalid but the tree is not the last good one: ${d}`);
        } else {
          if (!update.applied) fail(`the session refused an input a one-shot run accepts: ${update.problems.filter((p) => p.severity === 'error').map(formatProblem).join('; ') || `held ${update.held.join(', ')}`}`);
          const d = treeDifference(tree, expected);
          if (d) fail(`the tree is not the fresh render of the disk: ${d}`);
          good = tree;
        }
      }
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * A sequence through the real `gitops --watch` process and its file watcher: after each step and
 * a quiet period, the output folder must hold the fresh render of the disk (with its marker), or
 * the last good tree when the disk is invalid. An edit no event names (a linked file outside the
 * watched folder) is checked only if the watcher reported it.
 */
export async function runThroughProcess(ops: readonly Op[], configFile: string, scratch: string): Promise<void> {
  const config = loadConfig({ file: configFile }).config;
  const root = join(scratch, 'lab');
  const out = join(scratch, 'gitops');
  const lab = new LabOnDisk(root, join(scratch, 'outside'));
  const w = watchProcess(['-f', root, '--config', configFile, '-o', out, '--debounce', '50']);
  try {
    await w.waitFor(/watching/);
    let good = folderFiles(out);
    const done: string[] = [];
    for (const op of ops) {
      for (const step of lab.apply(op)) {
        const n = w.records();
        step.run?.();
        done.push(step.what);
        const fail = (what: string) => {
          throw new Error(`after step ${done.length} (${step.what}): ${what}\nsteps:\n${done.map((s, i) => `  ${i + 1}. ${s}`).join('\n')}\nstderr (end):\n${w.stderr().slice(-3000)}`);
        };
        if (step.events.length === 0) {
          if (!(await w.settled(n, 300, 1500).then(() => true, () => false))) continue;
        } else await w.settled(n, 300).catch((e: Error) => fail(e.message));
        const expected = freshRender(root, config);
        const tree = folderFiles(out);
        const d = treeDifference(tree, expected ? withMarker(expected) : good);
        if (d) fail(expected ? `the output folder is not a fresh render of the disk: ${d}` : `the disk is invalid but the folder is not the last good tree: ${d}`);
        good = tree;
      }
    }
  } finally {
    await w.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}
