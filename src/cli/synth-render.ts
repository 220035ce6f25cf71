import { loadInventory } from '../inputs/load.ts';
import { ParseCache } from '../cache/parse-cache.ts';
import { contentDigest, RenderCache, isSynthEntry } from '../cache/render-cache.ts';
import type { RunRecord } from '../cache/run-record.ts';
import { compose, renderAll, renderUnit } from '../compose/compose.ts';
import type { ComposerConfig } from '../config/config.ts';
import type { ParentRef } from '../model/labels.ts';
import { KEEP, outputState, writeTreeAtomically, type TreeContent } from '../sinks/atomic-tree.ts';
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
  const memo = ParseCache.open({ inputs });
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize, stdin, memo, texts: record?.texts });
  memo?.save();
  const composition = compose(inventory, config);
  // Every problem is reported before anything is written; one error writes nothing.
  const warnings = [...problems, ...composition.problems];
  if (reportProblems(warnings, opts.quiet)) return EXIT_INPUT;
  const jobs = Math.max(1, Number(opts.jobs) || 1);
  let files: Map<string, TreeContent>;
  // Each file's sha256 where known (the run record keeps them).
  const digests = new Map<string, string>();
  // The output folder's files now (after settling a crashed writer's leftovers), for KEEP.
  let state: Map<string, string> | undefined;
  let objects = 0;
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
    const cache = RenderCache.open({ kind: 'synth', config, inputs, output: opts.output }, inventory, isSynthEntry);
    // A set cached as unchanged whose file the folder holds as the last run wrote it is neither rendered, read nor written.
    state = cache && record ? outputState(opts.output, { inputs }) : undefined;
    files = new Map();
    const checks: CheckedSet[] = [];
    for (const unit of composition.units) {
      const rel = `${unit.id}.yaml`;
      let entry = cache?.get(unit);
      if (entry && state && record?.unchanged(rel, entry.digest, state.get(rel))) files.set(rel, KEEP);
      else {
        // A miss, or a hit whose file is gone or changed: the constructs render it (the cache holds no text).
        const rendered = renderUnit(unit);
        const yaml = objectsToYaml(rendered);
        entry = { digest: contentDigest(yaml), objects: rendered.length, check: checkSetObjects(rendered) };
        cache?.set(unit, entry);
        files.set(rel, yaml);
      }
      digests.set(rel, entry.digest);
      checks.push({ unit, check: entry.check });
      objects += entry.objects;
    }
    // What the API server would refuse, or two inputs rendering one object: nothing is written.
    const setProblems = renderedSetProblems(checks, sourceOf);
    warnings.push(...setProblems);
    if (reportProblems(setProblems, opts.quiet)) return EXIT_INPUT;
    cache?.save();
  }
  if (opts.stdout) {
    for (const content of files.values()) {
      const code = await writeStdout(content as string);
      if (code !== EXIT_OK) return code;
    }
    return EXIT_OK;
  }
  const result = writeTreeAtomically(opts.output, files, { inputs, state });
  record?.save(warnings, { count: files.size, objects }, files, digests, result.stats);
  process.stderr.write(`${files.size} resource sets, ${objects} objects → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  return EXIT_OK;
}

