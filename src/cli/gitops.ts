import { Option, type Command } from 'commander';
import { STDIN_PATH } from '../inputs/input-file.ts';
import { RunRecord } from '../cache/run-record.ts';
import { holdOutputFolder, patchTree } from '../sinks/atomic-tree.ts';
import { gitopsConfigProblems, gitopsPathWarning } from '../sinks/gitops-config.ts';
import { checkOutputFolder } from '../sinks/output-guard.ts';
import { applyHeapGrowth, HEAP_GROWING_PERCENT } from './heap-growth.ts';
import { MAX_DEBOUNCE_MS, MAX_JOBS, MAX_LOCK_TIMEOUT_S, wholeNumber } from './numeric-flags.ts';
import { configureOutputLock, DEFAULT_LOCK_TIMEOUT_S } from '../sinks/output-lock.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import type { ComposerConfig } from '../config/config.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems } from './report.ts';
import { stdinUsageError, usageError } from './stdin.ts';
import { CHECK_EXIT, inputPaths, type GitopsOptions } from './render-options.ts';
import { DEFAULT_DIFF_LIMITS, shellWord } from './tree-diff.ts';

export function registerGitops(program: Command): void {
  const cmd = program
    .command('gitops')
    .description('render the input into an Argo CD-ready tree: app of apps, one Application per workspace, tenant and namespace of instances')
    .requiredOption('-f, --file <path...>', 'input files or folders; - reads standard input (not with --watch)')
    .option('-o, --output <dir>', 'output folder, written crash-safely: missing, empty, or written by crownlabs before (see docs/cli.md)', 'gitops')
    .addOption(new Option('--check', `write nothing: compare the folder with what the input renders to and print a unified diff of the stale files (stdout; at most ${DEFAULT_DIFF_LIMITS.files} files, ${DEFAULT_DIFF_LIMITS.lines} lines each). Exit 0 up to date, 1 stale, 3 invalid input or configuration, or an unreadable folder (nothing compared)`).conflicts('watch'))
    .option('--full-diff', 'with --check: print the whole diff of every stale file')
    .option('--watch', 'keep running: after each change of the input or --config the tree is a fresh render of the disk; while any file is invalid the last good tree stays (see docs/gitops.md)')
    .option('--debounce <ms>', `watch mode: wait this long after the last change, 1 to ${MAX_DEBOUNCE_MS}`, wholeNumber(1, MAX_DEBOUNCE_MS), 150)
    .option('-q, --quiet', 'do not print warnings')
    .option('--lock-timeout <s>', `seconds to wait, 0 to ${MAX_LOCK_TIMEOUT_S}, while another crownlabs run writes the same -o folder; then fail (exit 1; in --watch, that update fails)`, wholeNumber(0, MAX_LOCK_TIMEOUT_S), DEFAULT_LOCK_TIMEOUT_S)
    .option('-j, --jobs <n>', `render threads for inputs of 400+ sets without --watch, 1 to ${MAX_JOBS}: this one and n-1 workers share the sets (see bench/RESULTS.md)`, wholeNumber(1, MAX_JOBS), 1);
  addConfigOptions(cmd).action(async (opts: GitopsOptions, command: Command) => {
    applyHeapGrowth(opts.watch ? HEAP_GROWING_PERCENT.watch : HEAP_GROWING_PERCENT.render);
    process.exitCode = await runGitops(opts, rerunCommand(command));
  });
}

/**
 * The command line to write the folder, for --check's hint: every option given on the command line
 * (-f, --config, config flags, -o…), but --check and --full-diff, quoted for a POSIX shell.
 */
export function rerunCommand(command: Command): string {
  const words = ['crownlabs', command.name()];
  for (const opt of command.options) {
    const name = opt.attributeName();
    if (name === 'check' || name === 'fullDiff' || command.getOptionValueSource(name) !== 'cli') continue;
    const value = command.getOptionValue(name) as unknown;
    const flag = opt.short ?? opt.long!;
    if (typeof value === 'boolean') words.push(flag);
    else words.push(flag, ...(Array.isArray(value) ? value : [value]).map((v) => shellWord(String(v))));
  }
  return words.join(' ');
}

export async function runGitops(opts: GitopsOptions, rerun = `crownlabs gitops -f ${opts.file.map(shellWord).join(' ')} -o ${shellWord(opts.output)}`): Promise<number> {
  const invalid = opts.check ? CHECK_EXIT.invalid : EXIT_INPUT;
  const usage = stdinUsageError('gitops', opts.file) ?? (opts.watch && opts.file.includes(STDIN_PATH) ? usageError('gitops', '--watch cannot watch standard input (-f -)') : undefined);
  if (usage !== undefined) return usage;
  const { config, problems: loaded } = configFromOptions(opts);
  const configProblems = [...loaded, ...(loaded.some((p) => p.severity === 'error') ? [] : gitopsConfigProblems(config))];
  if (reportProblems(configProblems)) return invalid;
  const inputs = inputPaths(opts);
  // Checked before any work (--check only reads it): a refused folder fails fast (OutputError, exit 1).
  if (opts.check) return gitopsInto(opts, rerun, config, inputs);
  checkOutputFolder(opts.output, inputs);
  const pathWarning = gitopsPathWarning(config, opts.output);
  if (pathWarning && !opts.quiet) process.stderr.write(`${pathWarning}\n`);
  // One writer at a time. A one-shot run holds the lock throughout (what it reads of the folder is
  // what it writes over); a watch session takes it around each write only.
  configureOutputLock({ timeoutMs: (opts.lockTimeout ?? DEFAULT_LOCK_TIMEOUT_S) * 1000 });
  if (opts.watch) return gitopsInto(opts, rerun, config, inputs);
  const release = holdOutputFolder(opts.output, inputs);
  try {
    return await gitopsInto(opts, rerun, config, inputs);
  } finally {
    release();
  }
}

async function gitopsInto(opts: GitopsOptions, rerun: string, config: ComposerConfig, inputs: string[]): Promise<number> {
  // The very inputs of the last run into a folder that still holds its output: nothing to do (src/cache/run-record.ts).
  // Not with sealed secrets: their values come from the folder.
  const record = opts.watch || opts.check || config.gitopsSecretMode === 'sealed-secret' ? undefined : RunRecord.open({ kind: 'gitops', config, files: opts.file, inputs, output: opts.output });
  const replay = record?.replay();
  if (replay) {
    reportProblems(replay.problems, opts.quiet);
    process.stderr.write(`${replay.summary.count} files → ${opts.output} (0 written, ${replay.summary.count} unchanged, 0 removed)\n`);
    return EXIT_OK;
  }
  // Only a run that renders loads the parser, compose, cdk8s and the constructs.
  return (await import('./gitops-render.ts')).renderGitops(opts, rerun, config, inputs, record);
}

/**
 * A watch update: writes only the files whose content changed and removes those no longer rendered,
 * crash-safe (patchTree). Returns how many files were touched (kept for bench/scenario.ts).
 */
export function applyFileChanges(dir: string, before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>, inputs: readonly string[] = []): number {
  return patchTree(dir, before, after, { inputs });
}

