import { relative } from 'node:path';
import { statKeyOf } from '../stat-key.ts';
import type { Inventory } from '../inputs/inventory.ts';
import { inventoryFromInput } from '../inputs/load.ts';
import { expandInputPaths, parseInputFile, type SourcedObject } from '../inputs/parse.ts';
import { hasErrors, type Problem } from '../inputs/problems.ts';
import { objectKey } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { instanceNameProblems } from '../model/instance-names.ts';
import { parentKey } from '../model/labels.ts';
import { compareUnits, compose, renderUnit, type ComposeOptions, type RenderedSet } from './compose.ts';
import { DependencyIndex, lookupKeysOf } from './dependency-index.ts';
import { checkSetObjects, parentSource, renderedSetProblems, type CheckedSet, type SetCheck } from './prewrite.ts';

interface FileState {
  objects: SourcedObject[];
  problems: Problem[];
  /** Its statKey when read: a file whose stat changed is read again. */
  stamp: string;
}

export interface UpdateResult {
  /** Problems of the whole input after the update; with an error, the sets were left as they were. */
  problems: Problem[];
  applied: boolean;
  /** Resource sets re-rendered (ids). */
  rerendered: string[];
  /**
   * Files that hold no object any more though their last rendered version did, not yet taken as
   * emptied (`update`'s `emptiedMayApply`): nothing was applied, no error; a later update decides.
   */
  held: string[];
}

export interface UpdateOptions {
  /**
   * Whether a file that became empty (no object) may drop its objects now. A file is truncated
   * before it is written again: until the caller says so, such an update waits (`held`).
   */
  emptiedMayApply?: (file: string) => boolean;
}

/**
 * Watch mode: the input files of a lab, kept parsed, with the sets rendered from them. A change to
 * some files re-parses those files and re-renders only the sets whose recorded dependencies
 * (`RenderUnit.dependsOn`, in a DependencyIndex) it touches (an edited Template re-renders the
 * Instances that use it, a Tenant that becomes a workspace manager the Instances of that
 * workspace); an invalid edit keeps the last good sets.
 *
 * The session mirrors the disk: `files` is what each input file held when last read, whether or not
 * the render of it succeeded; `rendered` what the sets were rendered from. Every update renders the
 * whole disk state (incrementally: from the files that differ from `rendered`), so a file whose
 * update failed stays pending and counts again with the next update, whichever file it is for.
 */
export class LabSession {
  /** Each input file as last read from disk (a file gone from disk is gone from here). */
  private files = new Map<string, FileState>();
  /** Each input file as the current sets were rendered from it. */
  private rendered = new Map<string, FileState>();
  private expandProblems: Problem[] = [];
  private sets = new Map<string, RenderedSet>();
  /** Input key → ids of the sets whose composition looked it up. */
  private readonly dependencies = new DependencyIndex();
  private readonly checks = new WeakMap<RenderedSet, SetCheck>();

  constructor(
    private readonly paths: readonly string[],
    private readonly config: ComposerConfig,
    private readonly cwd = process.cwd(),
    private readonly composeOptions: Pick<ComposeOptions, 'secretValues'> = {},
  ) {}

  /** Reads everything and renders every set. */
  load(onProgress?: (done: number, total: number) => void): UpdateResult {
    this.readDisk(new Set(), true);
    const inventory = this.inventoryOrProblems();
    if (!inventory.ok) return { problems: inventory.problems, applied: false, rerendered: [], held: [] };
    const composition = compose(inventory.inventory, this.config, this.composeOptions);
    const all = [...inventory.problems, ...composition.problems];
    if (hasErrors(all)) return { problems: all, applied: false, rerendered: [], held: [] };
    const sets = new Map<string, RenderedSet>();
    composition.units.forEach((unit, i) => {
      sets.set(unit.id, { unit, objects: renderUnit(unit) });
      onProgress?.(i + 1, composition.units.length);
    });
    const checked = this.checkSets(sets.values(), inventory.inventory);
    if (hasErrors(checked)) return { problems: [...all, ...checked], applied: false, rerendered: [], held: [] };
    this.replaceSets(sets);
    this.rendered = new Map(this.files);
    return { problems: all, applied: true, rerendered: [...sets.keys()], held: [] };
  }

  /**
   * Brings the session to the disk as it is now: `changedFiles` (the watcher's events), every file
   * pending since a failed update, and any file whose stat changed are read again; the input paths
   * are listed again (a file gone, added, or reached through a symbolic link counts as a one-shot
   * run counts it). When the whole input is valid the sets become those of a fresh render of it;
   * otherwise they stay as they were and the files stay pending.
   */
  update(changedFiles: readonly string[], options: UpdateOptions = {}): UpdateResult {
    this.readDisk(new Set(changedFiles), false);
    const changedKeys = new Set<string>();
    const touchedKeys = new Set<string>();
    const emptied: string[] = [];
    for (const f of new Set([...this.files.keys(), ...this.rendered.keys()])) {
      const before = this.rendered.get(f);
      const after = this.files.get(f);
      if (before === after) continue;
      if (after && before && after.objects.length === 0 && after.problems.length === 0 && before.objects.length > 0) emptied.push(f);
      diffKeys(before?.objects ?? [], after?.objects ?? [], changedKeys, touchedKeys);
    }
    const held = emptied.filter((f) => !(options.emptiedMayApply?.(f) ?? true));
    if (held.length) return { problems: [], applied: false, rerendered: [], held };
    const inventory = this.inventoryOrProblems();
    if (!inventory.ok) return { problems: inventory.problems, applied: false, rerendered: [], held: [] };
    // The parents whose sets may change: those edited, and those whose sets depend on an edited key.
    const affectedIds = this.dependencies.dependentsOf(touchedKeys);
    const affectedParents = new Set<string>([...changedKeys]);
    for (const id of affectedIds) affectedParents.add(parentKey(this.sets.get(id)!.unit.parent));
    const composition = compose(inventory.inventory, this.config, { ...this.composeOptions, only: (p) => affectedParents.has(parentKey(p)) });
    const all = [...inventory.problems, ...composition.problems];
    if (hasErrors(all)) return { problems: all, applied: false, rerendered: [], held: [] };
    // Sets re-rendered keep their place; the order is rebuilt only when sets come or go.
    const rendered = new Map(composition.units.map((unit) => [unit.id, { unit, objects: renderUnit(unit) }]));
    // Every set depends on its own parent's key, so the affected ids are all the sets that may go.
    const gone = [...affectedIds].filter((id) => !rendered.has(id));
    const added = [...rendered.keys()].filter((id) => !this.sets.has(id));
    // The sets after this update, checked before any of them replaces the last good ones.
    const after = [...this.sets.values()].filter((s) => !affectedIds.has(s.unit.id) && !rendered.has(s.unit.id));
    const checked = this.checkSets([...after, ...rendered.values()], inventory.inventory);
    if (hasErrors(checked)) return { problems: [...all, ...checked], applied: false, rerendered: [], held: [] };
    for (const id of gone) this.unindex(this.sets.get(id)!);
    for (const id of rendered.keys()) if (this.sets.has(id)) this.unindex(this.sets.get(id)!);
    if (gone.length || added.length) {
      const next = new Map(this.sets);
      for (const id of gone) next.delete(id);
      for (const [id, set] of rendered) next.set(id, set);
      this.sets = new Map([...next.values()].sort((a, b) => compareUnits(a.unit, b.unit)).map((set) => [set.unit.id, set]));
    } else for (const [id, set] of rendered) this.sets.set(id, set);
    for (const set of rendered.values()) this.index(set);
    this.rendered = new Map(this.files);
    return { problems: all, applied: true, rerendered: composition.units.map((u) => u.id), held: [] };
  }

  /**
   * Whether the disk differs from what the session last read: a file added, gone, or with another
   * stat, or another problem listing the paths (a broken link gone). Reads no file: for a caller that checks now and then, as watchers miss some changes
   * (a broken symbolic link removed, a linked file outside the watched folders).
   */
  diskChanged(): boolean {
    const { files, problems } = expandInputPaths(this.paths);
    if (files.length !== this.files.size || JSON.stringify(problems) !== JSON.stringify(this.expandProblems)) return true;
    return files.some((f) => this.files.get(f)?.stamp !== statKeyOf(f));
  }

  /** Files read since the sets were last rendered whose content the sets do not reflect yet. */
  pendingFiles(): string[] {
    return [...new Set([...this.files.keys(), ...this.rendered.keys()])].filter((f) => this.files.get(f) !== this.rendered.get(f));
  }

  /** The rendered sets, in composition order. */
  renderedSets(): RenderedSet[] {
    return [...this.sets.values()];
  }

  /**
   * Drops the rendered objects of every set; their pre-write checks stay, so later updates check
   * against them as before. renderedSets() then gives these sets with no objects (those of an update
   * come with theirs): for a caller that keeps what it made of them (gitops --watch: the files; at
   * 5k Instances the objects are ~36 MB of the heap).
   */
  releaseObjects(): void {
    for (const set of this.sets.values()) if (set.objects.length > 0) set.objects = [];
  }

  inputFiles(): string[] {
    return [...this.files.keys()];
  }

  private replaceSets(sets: Map<string, RenderedSet>): void {
    const sorted = [...sets.values()].sort((a, b) => compareUnits(a.unit, b.unit));
    this.sets = new Map(sorted.map((s) => [s.unit.id, s]));
    this.dependencies.clear();
    for (const set of sorted) this.index(set);
  }

  /** The pre-write checks of these sets; each set's own part is computed once. */
  private checkSets(sets: Iterable<RenderedSet>, inventory: Inventory): Problem[] {
    const checked: CheckedSet[] = [];
    for (const set of sets) {
      let check = this.checks.get(set);
      if (!check) this.checks.set(set, (check = checkSetObjects(set.objects)));
      checked.push({ unit: set.unit, check });
    }
    // Composition order, so the later input of two is the one reported, as in a full render.
    checked.sort((a, b) => compareUnits(a.unit, b.unit));
    return renderedSetProblems(checked, (parent) => parentSource(inventory, parent));
  }

  /** Records which input keys a set depends on. */
  private index(set: RenderedSet): void {
    this.dependencies.set(set.unit.id, set.unit.dependsOn);
  }

  private unindex(set: RenderedSet): void {
    this.dependencies.remove(set.unit.id);
  }

  /**
   * Lists the input paths as a one-shot run does and reads what may have changed: every file with
   * `all`, else those named, those pending (read, not rendered), new ones and those whose stat
   * changed. A file that is no longer listed is gone. One that cannot be read or parsed is an error
   * (its problems), not a removal, so the last good sets stay (a typo must not delete a tenant).
   */
  private readDisk(named: ReadonlySet<string>, all: boolean): void {
    const { files, problems } = expandInputPaths(this.paths);
    this.expandProblems = problems;
    const next = new Map<string, FileState>();
    for (const f of files) {
      const known = this.files.get(f);
      const stamp = statKeyOf(f);
      const reread = all || !known || named.has(f) || known !== this.rendered.get(f) || known.stamp !== stamp;
      next.set(f, reread ? this.readFile(f, stamp) : known);
    }
    this.files = next;
  }

  /** The same reader as one-shot runs: regular files only, size cap, alias cap. */
  private readFile(file: string, stamp: string): FileState {
    const { objects, problems } = parseInputFile(file, relative(this.cwd, file) || file, { maxFileBytes: this.config.inputMaxFileSize, level: this.config.apiLevel });
    return { objects, problems, stamp };
  }

  private inventoryOrProblems(): { ok: true; inventory: Inventory; problems: Problem[] } | { ok: false; problems: Problem[] } {
    const objects: SourcedObject[] = [];
    const read = [...this.expandProblems];
    for (const state of this.files.values()) {
      objects.push(...state.objects);
      read.push(...state.problems);
    }
    const loaded = inventoryFromInput(objects, read, this.config.apiLevel);
    const { inventory } = loaded;
    const problems = [...loaded.problems, ...instanceNameProblems(inventory)];
    return hasErrors(problems) ? { ok: false, problems } : { ok: true, inventory, problems };
  }
}

/**
 * The objects that differ between two versions of a file: their keys into `changed`, and every key
 * they answer to in lookups, before and after (`lookupKeysOf`), into `touched`.
 */
function diffKeys(before: readonly SourcedObject[], after: readonly SourcedObject[], changed: Set<string>, touched: Set<string>): void {
  const key = (o: SourcedObject) => `${o.object.kind}/${objectKey(o.object)}`;
  const old = new Map(before.map((o) => [key(o), o]));
  const touch = (o: SourcedObject) => {
    for (const k of lookupKeysOf(o.object.kind, o.object)) touched.add(k);
  };
  for (const o of after) {
    const k = key(o);
    const was = old.get(k);
    if (!was || JSON.stringify(was.object) !== JSON.stringify(o.object)) {
      changed.add(k);
      touch(o);
      if (was) touch(was);
    }
    old.delete(k);
  }
  for (const [k, was] of old) {
    changed.add(k);
    touch(was);
  }
}
