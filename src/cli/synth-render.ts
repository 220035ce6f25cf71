import { loadInventory } from '../inputs/load.ts';
import { ParseCache } from '../cache/parse-cache.ts';
import { contentDigest, RenderCache, isSynthEntry, type SynthEntry } from '../cache/render-cache.ts';
import { composeReusing, type ReusedSet } from '../cache/reuse.ts';
import type { RunRecord } from '../cache/run-record.ts';
import { compareUnits, compose, renderAll, renderUnit, type RenderUnit } from '../compose/compose.ts';
import type { ComposerConfig } from '../config/config.ts';
import { instanceNameProblems } from '../model/instance-names.ts';
import { parentKey, type ParentRef } from '../model/labels.ts';
import { KEEP, outputState, stageNewTree, writeTreeAtomically, type TreeContent, type TreeStage } from '../sinks/atomic-tree.ts';
import { allObjectsYaml } from '../sinks/files.ts';
import { PARALLEL_THRESHOLD, renderParallel } from '../sinks/parallel/render-pool.ts';
import { objectsToYaml } from '../sinks/yaml-emitter.ts';
import { checkRenderedSets, checkSetObjects, parentSource, renderedSetProblems, type CheckedSet } from '../compose/prewrite.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems, writeStdout } from './report.ts';
import { stdinIfNamed } from './stdin.ts';
import type { SynthOptions } from './render-options.ts';

/** `synth` past its checks (./synth.ts): parse, compose, render (through the render cache), write. */
export async function renderSynth(opts: SynthOptions, config: ComposerConfig, inputs: string[], record: RunRecord | undefined): Promise<number> {
  const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
  // Files parsed as they are now in an earlier run come from the parse cache (src/cache/parse-cache.ts).
  const memo = ParseCache.open({ inputs, level: config.apiLevel });
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize, stdin, memo, texts: record?.texts, level: config.apiLevel });
  memo?.save();
  const jobs = Math.max(1, Number(opts.jobs) || 1);
  // Into a folder the run record knows, a set stored as quiet whose inputs are all as they were is
  // taken from the render cache without composing it (RenderCache.reuse): one edit in a large lab
  // composes the sets that read it, not all of them.
  const early = jobs === 1 && !opts.stdout && record ? RenderCache.open({ kind: 'synth', config, inputs, output: opts.output }, inventory, isSynthEntry) : undefined;
  const { composition, reused } = composeReusing(inventory, config, early);
  // Every problem is reported before anything is written; one error writes nothing.
  const warnings = [...problems, ...instanceNameProblems(inventory), ...composition.problems];
  if (reportProblems(warnings, opts.quiet)) return EXIT_INPUT;
  let files: Map<string, TreeContent>;
  // Each file's sha256 where known (the run record keeps them).
  const digests = new Map<string, string>();
  // The output folder's files now (after settling a crashed writer's leftovers), for KEEP.
  let state: Map<string, string> | undefined;
  let objects = 0;
  // A first write of the folder: its files are written by a writer thread while the rest render.
  let stage: TreeStage | undefined;
  const sourceOf = (parent: ParentRef) => parentSource(inventory, parent);
  if (jobs > 1 && composition.units.length >= PARALLEL_THRESHOLD) {
    // Large inputs: the same composition, split over threads; files come back in composition order.
    files = new Map();
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'synth', undefined, { threads: jobs });
    const setProblems = renderedSetProblems(composition.units.map((unit, i) => ({ unit, check: out[i].check })), sourceOf);
    warnings.push(...setProblems);
    if (reportProblems(setProblems, opts.quiet)) return EXIT_INPUT;
    composition.units.forEach((unit, i) => {
      files.set(`${unit.id}.yaml`, out[i].yaml!);
      objects += out[i].objectCount;
    });
  } else if (opts.stdout) {
    const sets = renderAll(composition);
    // What the API server would refuse, or two inputs rendering one object: nothing is written.
    if (reportProblems(checkRenderedSets(sets, sourceOf), opts.quiet)) return EXIT_INPUT;
    return writeStdout(allObjectsYaml(sets));
  } else {
    // Sets whose inputs, config and code are as last time come from the render cache (src/cache).
    const cache = early ?? RenderCache.open({ kind: 'synth', config, inputs, output: opts.output }, inventory, isSynthEntry);
    // A set cached as unchanged whose file the folder holds as the last run wrote it is neither rendered, read nor written.
    state = cache && record ? outputState(opts.output, { inputs, walked: record.walked }) : undefined;
    const kept = (rel: string, entry: SynthEntry) => state !== undefined && record !== undefined && record.unchanged(rel, entry.digest, state.get(rel));
    // A reused set whose file is not in the folder as written is composed after all, and rendered.
    const recompose = new Set(reused.filter((r) => !kept(`${r.id}.yaml`, r.entry)).map((r) => parentKey(r.parent)));
    const again = recompose.size > 0 ? compose(inventory, config, { only: (parent) => recompose.has(parentKey(parent)) }) : undefined;
    // None expected (a reused set's composition reported nothing, and its inputs are the same), but never dropped.
    if (again) {
      warnings.push(...again.problems);
      if (reportProblems(again.problems, opts.quiet)) return EXIT_INPUT;
    }
    const quiet = (unit: RenderUnit) => !composition.reported.has(parentKey(unit.parent)) && !again?.reported.has(parentKey(unit.parent));
    const sets: (RenderUnit | ReusedSet<SynthEntry>)[] = [...composition.units, ...(again?.units ?? []), ...reused.filter((r) => !recompose.has(parentKey(r.parent)))];
    sets.sort(compareUnits);
    files = new Map();
    const checks: CheckedSet[] = [];
    if (!state) stage = stageNewTree(opts.output, { inputs, files: sets.length });
    try {
      for (const unit of sets) {
        const rel = `${unit.id}.yaml`;
        if ('entry' in unit) {
          files.set(rel, KEEP);
          digests.set(rel, unit.entry.digest);
          checks.push({ unit, check: unit.entry.check });
          objects += unit.entry.objects;
          continue;
        }
        let entry = cache?.get(unit, quiet(unit));
        if (entry && kept(rel, entry)) files.set(rel, KEEP);
        else {
          // A miss, or a hit whose file is gone or changed: the constructs render it (the cache holds no text).
          const rendered = renderUnit(unit);
          const yaml = objectsToYaml(rendered);
          entry = { digest: contentDigest(yaml), objects: rendered.length, check: checkSetObjects(rendered) };
          cache?.set(unit, entry, quiet(unit));
          // Staged, the text goes to the writer thread and is not kept here.
          files.set(rel, stage ? stage.add(rel, yaml) : yaml);
        }
        digests.set(rel, entry.digest);
        checks.push({ unit, check: entry.check });
        objects += entry.objects;
      }
      // What the API server would refuse, or two inputs rendering one object: nothing is written.
      const setProblems = renderedSetProblems(checks, sourceOf);
      warnings.push(...setProblems);
      if (reportProblems(setProblems, opts.quiet)) {
        stage?.abort();
        return EXIT_INPUT;
      }
      cache?.save();
    } catch (err) {
      stage?.abort();
      throw err;
    }
  }
  if (opts.stdout) {
    for (const content of files.values()) {
      const code = await writeStdout(content as string);
      if (code !== EXIT_OK) return code;
    }
    return EXIT_OK;
  }
  const result = writeTreeAtomically(opts.output, files, { inputs, state, stage });
  record?.save(warnings, { count: files.size, objects }, files, digests, result.stats);
  process.stderr.write(`${files.size} resource sets, ${objects} objects → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  return EXIT_OK;
}

