import { Command, CommanderError } from 'commander';
import { OutputError } from '../sinks/output-guard.ts';
import { configHelp } from './options.ts';
import { EXIT_USAGE, reportOutputError } from './report.ts';

/** commander's own handling of an unknown option, which it does not declare in its typings. */
const baseUnknownOption = (Command.prototype as unknown as { unknownOption(this: Command, flag: string): void }).unknownOption;

/**
 * A command whose "did you mean" for an unknown option also considers the configuration flags,
 * which its --help leaves out (commander suggests among the options its help shows).
 */
class CrownlabsCommand extends Command {
  override createCommand(name?: string): Command {
    return new CrownlabsCommand(name);
  }

  unknownOption(flag: string): void {
    const hidden = this.options.filter((o) => o.hidden);
    for (const o of hidden) o.hidden = false;
    try {
      baseUnknownOption.call(this, flag);
    } finally {
      for (const o of hidden) o.hidden = true;
    }
  }
}

type Register = (program: Command) => void;

/**
 * The commands, in --help order, each loaded only when needed: a command's modules (and the packages
 * they use: cdk8s, ajv, the Kubernetes client…) cost start-up time that other commands should not pay.
 */
const COMMANDS: [names: string[], load: () => Promise<Register>][] = [
  [['synth'], async () => (await import('./synth.ts')).registerSynth],
  [['validate'], async () => (await import('./validate.ts')).registerValidate],
  [['gitops'], async () => (await import('./gitops.ts')).registerGitops],
  [['imagelist'], async () => (await import('./imagelist.ts')).registerImageList],
  [['bastion-keys', 'ssh-tracker'], async () => (await import('./bastion.ts')).registerBastion],
  [['controller'], async () => (await import('./controller.ts')).registerController],
  [['diff'], async () => (await import('./diff.ts')).registerDiff],
  [['migrate'], async () => (await import('./migrate.ts')).registerMigrate],
  [['user-pods-api'], async () => (await import('./user-pods-api.ts')).registerUserPodsApi],
  [['manifests'], async () => (await import('./manifests.ts')).registerManifests],
];

/**
 * The program for `argv`: with a command name first, only that command's modules are loaded; none
 * for --version alone; anything else (--help, help, an unknown or misspelt command) loads them all.
 */
export async function buildProgram(argv: readonly string[] = []): Promise<Command> {
  const named = COMMANDS.find(([names]) => names.includes(argv[2]));
  const version = argv.length === 3 && (argv[2] === '--version' || argv[2] === '-V');
  const registers = await Promise.all((named ? [named] : version ? [] : COMMANDS).map(([, load]) => load()));
  return programOf(registers);
}

function programOf(registers: readonly Register[]): Command {
  const program = new CrownlabsCommand('crownlabs')
    .description('crownlabs-composer: CrownLabs resources rendered by cdk8s constructs (synth, gitops, apply-controller)')
    .version('0.1.0')
    .helpCommand(false)
    // A usage error is one line (commander's suggestion joined to it) plus where to look, not the whole help.
    .configureOutput({ outputError: (str, write) => write(`${str.trimEnd().replace(/\n+/g, ' ')}\n`) })
    .exitOverride();
  for (const register of registers) register(program);
  program
    .command('help [topic]')
    .description("show the help of a command, or 'help config': every configuration key with its flag, environment variable and default")
    .action((topic?: string) => {
      if (topic === undefined) return program.outputHelp();
      if (topic === 'config') return void process.stdout.write(`${configHelp()}\n`);
      const cmd = program.commands.find((c) => c.name() === topic && c.name() !== 'help');
      if (!cmd) program.error(`error: unknown help topic '${topic}' (a command, or config)`, { exitCode: EXIT_USAGE, code: 'crownlabs.unknownHelpTopic' });
      cmd!.outputHelp();
    });
  program.showHelpAfterError("see 'crownlabs --help'");
  for (const cmd of program.commands) cmd.showHelpAfterError(`see 'crownlabs ${cmd.name()} --help'`);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = await buildProgram(argv);
  try {
    // An unknown command is a usage error whatever follows it: without this, a --help after it
    // would print the main help and exit 0. Given alone, commander reports it with a did-you-mean.
    const first = argv[2];
    const known = (name: string) => program.commands.some((c) => c.name() === name || c.aliases().includes(name));
    await program.parseAsync(first !== undefined && !first.startsWith('-') && !known(first) ? argv.slice(0, 3) : argv);
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
