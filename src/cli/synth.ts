import type { Command } from 'commander';
import { loadInventory } from '../api/load.ts';
import { RenderCache, isSynthEntry } from '../cache/render-cache.ts';
import { RunRecord } from '../cache/run-record.ts';
import { compose, renderAll, renderUnit } from '../compose/compose.ts';
import { writeTreeAtomically } from '../sinks/atomic-tree.ts';
import { allObjectsYaml } from '../sinks/files.ts';
import { objectsToYaml } from '../sinks/yaml-emitter.ts';
import { checkOutputFolder } from '../sinks/output-guard.ts';
import { PARALLEL_THRESHOLD, renderParallel } from '../sinks/parallel/render-pool.ts';
import type { ParentRef } from '../model/labels.ts';
import { checkRenderedSets, checkSetObjects, parentSource, renderedSetProblems, type CheckedSet } from '../validate/prewrite.ts';
import { STDIN_PATH } from '../api/input-file.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { stdinIfNamed, stdinUsageError } from './stdin.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems, writeStdout } from './report.ts';

interface SynthOptions {
  file: string[];
  output: string;
  stdout?: boolean;
  quiet?: boolean;
  jobs: string;
  [key: string]: unknown;
}

export function registerSynth(program: Command): void {
  const cmd = program
    .command('synth')
    .description('render every resource set of the input into one YAML file per set (or to stdout)')
    .requiredOption('-f, --file <path...>', 'input files or folders (YAML, multi-document; folders are read recursively); - reads standard input')
    .option('-o, --output <dir>', 'output folder, replaced atomically: missing, empty, or written by crownlabs before (see docs/cli.md)', 'dist')
    .option('--stdout', 'write all objects to stdout as one multi-document YAML stream instead')
    .option('-q, --quiet', 'do not print warnings')
    .option('-j, --jobs <n>', 'render threads for inputs of 400+ sets: this one and n-1 workers share the sets (see bench/RESULTS.md)', '1');
  addConfigOptions(cmd).action(async (opts: SynthOptions) => {
    process.exitCode = await runSynth(opts);
  });
}

export async function runSynth(opts: SynthOptions): Promise<number> {
  const usage = stdinUsageError('synth', opts.file);
  if (usage !== undefined) return usage;
  const { config, problems: configProblems } = configFromOptions(opts);
  if (reportProblems(configProblems)) return EXIT_INPUT;
  // The output is checked before any work: a refused folder fails fast (OutputError, exit 1).
  const inputs = inputPaths(opts);
  if (!opts.stdout) checkOutputFolder(opts.output, inputs);
  // The very inputs of the last run into a folder that still holds its output: nothing to do (src/cache/run-record.ts).
  const record = opts.stdout ? undefined : RunRecord.open({ kind: 'synth', config, files: opts.file, inputs, output: opts.output });
  const replay = record?.replay();
  if (replay) {
    reportProblems(replay.problems, opts.quiet);
    process.stderr.write(`${replay.summary.count} resource sets, ${replay.summary.objects} objects → ${opts.output} (0 written, ${replay.summary.count} unchanged, 0 removed)\n`);
    return EXIT_OK;
  }
  const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize, stdin });
  const composition = compose(inventory, config);
  // Every problem is reported before anything is written; one error writes nothing.
  const warnings = [...problems, ...composition.problems];
  if (reportProblems(warnings, opts.quiet)) return EXIT_INPUT;
  const jobs = Math.max(1, Number(opts.jobs) || 1);
  let files: Map<string, string>;
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
    files = new Map();
    const checks: CheckedSet[] = [];
    for (const unit of composition.units) {
      let entry = cache?.get(unit);
      if (!entry) {
        const rendered = renderUnit(unit);
        entry = { yaml: objectsToYaml(rendered), objects: rendered.length, check: checkSetObjects(rendered) };
        cache?.set(unit, entry);
      }
      files.set(`${unit.id}.yaml`, entry.yaml);
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
      const code = await writeStdout(content);
      if (code !== EXIT_OK) return code;
    }
    return EXIT_OK;
  }
  const result = writeTreeAtomically(opts.output, files, { inputs });
  record?.save(warnings, { count: files.size, objects }, files);
  process.stderr.write(`${files.size} resource sets, ${objects} objects → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  return EXIT_OK;
}

/** What a command reads: its -f paths and its config file (an output must not overlap them). */
export function inputPaths(opts: { file: string[]; config?: unknown }): string[] {
  const files = opts.file.filter((f) => f !== STDIN_PATH);
  return typeof opts.config === 'string' ? [...files, opts.config] : files;
}
