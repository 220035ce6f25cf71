import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadInventory } from '../api/load.ts';
import { compose, renderAll } from '../compose/compose.ts';
import { allObjectsYaml, writeDist } from '../sinks/files.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { EXIT_INPUT, EXIT_OK, reportProblems } from './report.ts';

interface SynthOptions {
  file: string[];
  output: string;
  stdout?: boolean;
  quiet?: boolean;
  [key: string]: unknown;
}

export function registerSynth(program: Command): void {
  const cmd = program
    .command('synth')
    .description('render every resource set of the input into one YAML file per set (or to stdout)')
    .requiredOption('-f, --file <path...>', 'input files or folders (YAML, multi-document; folders are read recursively)')
    .option('-o, --output <dir>', 'output folder, replaced atomically', 'dist')
    .option('--stdout', 'write all objects to stdout as one multi-document YAML stream instead')
    .option('-q, --quiet', 'do not print warnings');
  addConfigOptions(cmd).action((opts: SynthOptions) => {
    process.exitCode = runSynth(opts);
  });
}

export function runSynth(opts: SynthOptions): number {
  const { config, problems: configProblems } = configFromOptions(opts);
  if (reportProblems(configProblems)) return EXIT_INPUT;
  const { inventory, problems } = loadInventory(opts.file);
  const composition = compose(inventory, config);
  // Every problem is reported before anything is written; one error writes nothing.
  if (reportProblems([...problems, ...composition.problems], opts.quiet)) return EXIT_INPUT;
  const sets = renderAll(composition);
  if (opts.stdout) {
    process.stdout.write(allObjectsYaml(sets));
  } else {
    const out = resolve(opts.output);
    const result = writeDist(out, sets);
    const objects = sets.reduce((n, s) => n + s.objects.length, 0);
    process.stderr.write(`${sets.length} resource sets, ${objects} objects → ${opts.output} (${result.written} written, ${result.unchanged} unchanged, ${result.removed} removed)\n`);
  }
  return EXIT_OK;
}
