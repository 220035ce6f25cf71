import type { Command } from 'commander';
import { RunRecord } from '../cache/run-record.ts';
import { holdOutputFolder } from '../sinks/atomic-tree.ts';
import { applyHeapGrowth, HEAP_GROWING_PERCENT } from './heap-growth.ts';
import { MAX_JOBS, MAX_LOCK_TIMEOUT_S, wholeNumber } from './numeric-flags.ts';
import { configureOutputLock, DEFAULT_LOCK_TIMEOUT_S } from '../sinks/output-lock.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import type { ComposerConfig } from '../config/config.ts';
import { stdinUsageError } from './stdin.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems } from './report.ts';
import { inputPaths, type SynthOptions } from './render-options.ts';

export function registerSynth(program: Command): void {
  const cmd = program
    .command('synth')
    .description('render every resource set of the input into one YAML file per set (or to stdout)')
    .requiredOption('-f, --file <path...>', 'input files or folders (YAML, multi-document; folders are read recursively); - reads standard input')
    .option('-o, --output <dir>', 'output folder, written crash-safely: missing, empty, or written by crownlabs before (see docs/cli.md)', 'dist')
    .option('--stdout', 'write all objects to stdout as one multi-document YAML stream instead')
    .option('-q, --quiet', 'do not print warnings')
    .option('--lock-timeout <s>', `seconds to wait, 0 to ${MAX_LOCK_TIMEOUT_S}, while another crownlabs run writes the same -o folder; then fail (exit 1)`, wholeNumber(0, MAX_LOCK_TIMEOUT_S), DEFAULT_LOCK_TIMEOUT_S)
    .option('-j, --jobs <n>', `render threads for inputs of 400+ sets, 1 to ${MAX_JOBS}: this one and n-1 workers share the sets (see bench/RESULTS.md)`, wholeNumber(1, MAX_JOBS), 1);
  addConfigOptions(cmd).action(async (opts: SynthOptions) => {
    applyHeapGrowth(HEAP_GROWING_PERCENT.render);
    process.exitCode = await runSynth(opts);
  });
}

export async function runSynth(opts: SynthOptions): Promise<number> {
  const usage = stdinUsageError('synth', opts.file);
  if (usage !== undefined) return usage;
  const { config, problems: configProblems } = configFromOptions(opts);
  if (reportProblems(configProblems)) return EXIT_INPUT;
  // The output is checked (and locked) before any work: a refused folder fails fast (OutputError, exit 1).
  const inputs = inputPaths(opts);
  if (opts.stdout) return (await import('./synth-render.ts')).renderSynth(opts, config, inputs, undefined);
  // One writer at a time: the folder this run reads (its run record, its files) is the one it writes over.
  configureOutputLock({ timeoutMs: (opts.lockTimeout ?? DEFAULT_LOCK_TIMEOUT_S) * 1000 });
  const release = holdOutputFolder(opts.output, inputs);
  try {
    return await synthInto(opts, config, inputs);
  } finally {
    release();
  }
}

async function synthInto(opts: SynthOptions, config: ComposerConfig, inputs: string[]): Promise<number> {
  // The very inputs of the last run into a folder that still holds its output: nothing to do (src/cache/run-record.ts).
  const record = RunRecord.open({ kind: 'synth', config, files: opts.file, inputs, output: opts.output });
  const replay = record?.replay();
  if (replay) {
    reportProblems(replay.problems, opts.quiet);
    process.stderr.write(`${replay.summary.count} resource sets, ${replay.summary.objects} objects → ${opts.output} (0 written, ${replay.summary.count} unchanged, 0 removed)\n`);
    return EXIT_OK;
  }
  // Only a run that renders loads the parser, compose, cdk8s and the constructs.
  return (await import('./synth-render.ts')).renderSynth(opts, config, inputs, record);
}

