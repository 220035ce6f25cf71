import { Command, CommanderError } from 'commander';
import { OutputError } from '../sinks/output-guard.ts';
import { registerBastion } from './bastion.ts';
import { registerController } from './controller.ts';
import { registerDiff } from './diff.ts';
import { registerGitops } from './gitops.ts';
import { registerImageList } from './imagelist.ts';
import { registerManifests } from './manifests.ts';
import { registerSynth } from './synth.ts';
import { registerUserPodsApi } from './user-pods-api.ts';
import { registerValidate } from './validate.ts';
import { EXIT_USAGE, reportOutputError } from './report.ts';

export function buildProgram(): Command {
  const program = new Command('crownlabs')
    .description('crownlabs-composer: CrownLabs resources rendered by cdk8s constructs (synth, gitops, apply-controller)')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  registerSynth(program);
  registerValidate(program);
  registerGitops(program);
  registerImageList(program);
  registerBastion(program);
  registerController(program);
  registerDiff(program);
  registerUserPodsApi(program);
  registerManifests(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version exit through here with code 0.
      return err.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    // A refused or unwritable output (-o): a clear message, exit 1.
    if (err instanceof OutputError) return reportOutputError(err);
    process.stderr.write(`crownlabs: internal error: ${(err as Error).message}\n`);
    return 70;
  }
}
