import type { Command } from 'commander';
import { loadInventory } from '../inputs/load.ts';
import { formatProblem, hasErrors, type Problem } from '../inputs/problems.ts';
import { compose, renderUnit } from '../compose/compose.ts';
import type { ParentRef } from '../model/labels.ts';
import { instanceNameProblems } from '../model/instance-names.ts';
import { objectIdentity, parentSource, renderedSetProblems, type CheckedSet } from '../compose/prewrite.ts';
import { setIssueProblems, sharedValidator, validateRenderedSet, type CompileTiming } from '../validate/validator.ts';
import { ValidationThread } from '../validate/validation-thread.ts';
import { MAX_JOBS, wholeNumber } from './numeric-flags.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { stdinIfNamed, stdinUsageError } from './stdin.ts';
import { EXIT_INPUT, EXIT_OK, EXIT_USAGE } from './report.ts';
import type { ComposerConfig } from '../config/config.ts';

interface ValidateOptions {
  file: string[];
  quiet?: boolean;
  timings?: boolean;
  jobs?: number;
  [key: string]: unknown;
}

export function registerValidate(program: Command): void {
  const cmd = program
    .command('validate')
    .description(
      'check the input like synth does, then render it and validate every rendered object offline against the vendored ' +
        'Kubernetes OpenAPI and CRD schemas (strict: unknown fields are errors); writes nothing',
    )
    .requiredOption('-f, --file <path...>', 'input files or folders (YAML, multi-document; folders are read recursively); - reads standard input')
    .option('-q, --quiet', 'do not print warnings')
    .option('--timings', 'print how long loading, compiling and validating took, per kind')
    .option('-j, --jobs <n>', `threads, 1 to ${MAX_JOBS}: 2 or more checks the schemas on a second thread while this one renders; 1 does both on this one (less memory)`, wholeNumber(1, MAX_JOBS), 2);
  addConfigOptions(cmd).action(async (opts: ValidateOptions) => {
    process.exitCode = await runValidate(opts);
  });
}

export async function runValidate(opts: ValidateOptions): Promise<number> {
  const usage = stdinUsageError('validate', opts.file);
  if (usage !== undefined) return usage;
  const { config, problems: configProblems } = configFromOptions(opts);
  if (report(configProblems, opts.quiet)) return EXIT_INPUT;
  const jobs = opts.jobs ?? 2;
  // Started first: the thread loads its validator while this one parses and composes.
  const thread = jobs > 1 ? await ValidationThread.start() : undefined;
  try {
    return await check(opts, config, thread);
  } finally {
    thread?.stop();
  }
}

async function check(opts: ValidateOptions, config: ComposerConfig, thread: ValidationThread | undefined): Promise<number> {
  const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
  const { inventory, problems } = loadInventory(opts.file, { maxFileBytes: config.inputMaxFileSize, stdin, level: config.apiLevel });
  const composition = compose(inventory, config);
  // The input is checked exactly like synth does; nothing is rendered from a bad input.
  if (report([...problems, ...instanceNameProblems(inventory), ...composition.problems], opts.quiet)) return EXIT_INPUT;
  const validator = thread ? undefined : sharedValidator();
  const sourceOf = (parent: ParentRef) => parentSource(inventory, parent);
  // Set by set: each set's objects are validated as it is rendered (here, or sent to the thread as
  // text) and then dropped (only their identities are kept, for collisions), so memory stays that
  // of one set, as in synth.
  let renderMs = 0;
  let validateMs = 0;
  let objects = 0;
  const found: Problem[] = [];
  const ids: CheckedSet[] = [];
  for (const unit of composition.units) {
    const t0 = performance.now();
    const set = { unit, objects: renderUnit(unit) };
    const t1 = performance.now();
    if (thread) thread.add(set.objects);
    else {
      found.push(...validateRenderedSet(set, validator!, sourceOf));
      validateMs += performance.now() - t1;
    }
    renderMs += t1 - t0;
    objects += set.objects.length;
    ids.push({ unit, check: { ids: set.objects.map(objectIdentity), issues: [] } });
  }
  let timings: CompileTiming[] = validator?.timings ?? [];
  if (thread) {
    const done = await thread.finish();
    composition.units.forEach((unit, i) => found.push(...setIssueProblems(unit, done.issues[i], sourceOf)));
    validateMs = done.ms;
    timings = done.timings;
  }
  // Two inputs rendering one object (or one rendering it twice): only one could exist.
  found.push(...renderedSetProblems(ids, sourceOf));
  if (opts.timings) {
    for (const t of timings) process.stderr.write(`timing: schema ${t.apiVersion} ${t.kind}: ${t.ms.toFixed(0)} ms${t.cached ? ' (cached)' : ''}\n`);
    process.stderr.write(`timing: rendered ${ids.length} resource sets in ${renderMs.toFixed(0)} ms; validated ${objects} objects in ${validateMs.toFixed(0)} ms${thread ? ' (on a second thread)' : ''}\n`);
  }
  if (report(found, opts.quiet)) return EXIT_INPUT;
  process.stdout.write(`${objects} objects in ${ids.length} resource sets valid at API level ${config.apiLevel}\n`);
  return EXIT_OK;
}

/** Prints problems to stderr (warnings unless quiet); true when any is an error. */
function report(problems: readonly Problem[], quiet = false): boolean {
  for (const p of problems) {
    if (p.severity === 'warning' && quiet) continue;
    process.stderr.write(`${formatProblem(p)}\n`);
  }
  const errors = problems.filter((p) => p.severity === 'error').length;
  if (errors > 0) process.stderr.write(`${errors} error${errors === 1 ? '' : 's'}\n`);
  return hasErrors(problems);
}
