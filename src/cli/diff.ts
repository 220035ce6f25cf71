/**
 * `crownlabs diff`: what the apply-controller would change in the cluster (src/controller/dry-run-diff.ts),
 * printed as `kubectl diff` prints it: the live objects and the dry-run answers are written as YAML
 * into two temporary folders, LIVE-* and MERGED-*, one file per object, and `diff -u -N` (or
 * $KUBECTL_EXTERNAL_DIFF) compares the folders on stdout. Like kubectl we run the system's diff
 * rather than a library: same headers, same hunks, and the same way to plug in another differ.
 * A report (changed fields, takeovers, dangers, creates, prunes, a summary line) goes to stderr.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { loadInventory } from '../inputs/load.ts';
import { formatProblem } from '../inputs/problems.ts';
import { diffAgainstCluster, type DiffResult, type ObjectDiff } from '../controller/dry-run-diff.ts';
import { KubeClient } from '../kube/client.ts';
import { kubectlFileName, maskSecrets, summaryLine } from '../controller/object-diff.ts';
import { objectToYaml } from '../sinks/yaml-emitter.ts';
import { parseDuration } from '../model/duration.ts';
import { instanceNameProblems } from '../model/instance-names.ts';
import { loadKubeConfig } from './kube.ts';
import { parseLabelSelector, type LabelMatcher } from './label-selector.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { stdinIfNamed, stdinUsageError } from './stdin.ts';

/** As `kubectl diff`: 0 no change, 1 changes, 2 (or more) errors. */
export const DIFF_EXIT = { same: 0, changes: 1, error: 2 } as const;

interface DiffCliOptions {
  file?: string[];
  fromCluster?: boolean;
  kubeconfig?: string;
  namespace?: string;
  selector?: string;
  tenantNsKeepAlive: string;
  quiet?: boolean;
  [key: string]: unknown;
}

/** Changed field paths printed per object; the diff on stdout has them all. */
const MAX_PATHS = 12;

export function registerDiff(program: Command): void {
  const cmd = program
    .command('diff')
    .description(
      'show what the apply-controller would change: server-side dry-run apply (field manager crownlabs-composer, force) of what the inputs render, diffed against the live objects as kubectl diff does, plus the objects it would create and prune. Exit 0: no change, 1: changes, 2: errors',
    )
    .option('-f, --file <path...>', 'input files or folders (YAML, multi-document; folders are read recursively); - reads standard input')
    .option('--from-cluster', 'render the CrownLabs resources read from the cluster instead of files')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('-n, --namespace <namespace>', 'only objects in this namespace (cluster-scoped objects are left out)')
    .option('-l, --selector <selector>', 'only objects whose labels match (kubectl syntax: k=v, k!=v, k in (a,b), k, !k)')
    .option('--tenant-ns-keep-alive <duration>', "the controller's keep-alive of personal namespaces", '10h')
    .option('-q, --quiet', 'do not print warnings');
  addConfigOptions(cmd).action(async (opts: DiffCliOptions) => {
    process.exitCode = await runDiff(opts);
  });
}

function fail(message: string): number {
  process.stderr.write(`crownlabs diff: ${message}\n`);
  return DIFF_EXIT.error;
}

export async function runDiff(opts: DiffCliOptions): Promise<number> {
  const hasFiles = (opts.file ?? []).length > 0;
  if (hasFiles === !!opts.fromCluster) return fail('give the inputs with -f PATH…, or --from-cluster (one of the two); see --help');
  let selector: LabelMatcher;
  let keepAliveMs: number;
  try {
    selector = parseLabelSelector(opts.selector ?? '');
    keepAliveMs = parseDuration(String(opts.tenantNsKeepAlive));
  } catch (e) {
    return fail((e as Error).message);
  }
  const usage = stdinUsageError('diff', opts.file);
  if (usage !== undefined) return usage;
  const { config, problems: configProblems } = configFromOptions(opts);
  const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
  const { inventory, problems: inputProblems } = hasFiles ? loadInventory(opts.file!, { maxFileBytes: config.inputMaxFileSize, stdin, level: config.apiLevel }) : { inventory: undefined, problems: [] };
  const early = [...configProblems, ...inputProblems, ...(inventory ? instanceNameProblems(inventory) : [])];
  for (const p of early) if (p.severity === 'error' || !opts.quiet) process.stderr.write(`${formatProblem(p)}\n`);
  if (early.some((p) => p.severity === 'error')) return fail(`${early.filter((p) => p.severity === 'error').length} input error(s): nothing compared`);

  let client: KubeClient;
  try {
    client = new KubeClient(loadKubeConfig(opts.kubeconfig));
  } catch (e) {
    return fail(`kubeconfig: ${(e as Error).message}`);
  }
  let result: DiffResult;
  try {
    result = await diffAgainstCluster({
      client,
      config,
      files: inventory,
      keepAliveMs,
      include: (o) => (!opts.namespace || o.metadata.namespace === opts.namespace) && selector(o.metadata.labels),
    });
  } catch (e) {
    return fail(`cannot read the cluster at ${client.server}: ${oneLine((e as Error).message)}`);
  }
  const inputErrors = hasFiles ? result.problems.filter((p) => p.severity === 'error').length : 0;
  for (const p of result.problems) if (p.severity === 'error' || !opts.quiet) process.stderr.write(`${formatProblem(p)}\n`);

  let diffError: string | undefined;
  if (result.changes.length > 0) diffError = await printDiff(result.changes);
  process.stderr.write(report(result));
  const errors = result.errors.length + inputErrors + (diffError ? 1 : 0);
  if (diffError) process.stderr.write(`crownlabs diff: ${diffError}\n`);
  process.stderr.write(`crownlabs diff: ${summaryLine(result.changes, errors)}\n`);
  if (errors > 0) return DIFF_EXIT.error;
  return result.changes.length > 0 ? DIFF_EXIT.changes : DIFF_EXIT.same;
}

function oneLine(s: string): string {
  return s.split('\n')[0];
}

/** The per-object report: one line per object, then its danger, takeover and changed fields. */
export function report(result: Pick<DiffResult, 'changes' | 'errors'>): string {
  let out = '';
  const word = { change: 'changed', create: 'create', prune: 'prune' } as const;
  for (const c of result.changes) {
    out += `${word[c.action].padEnd(8)}${c.id}${c.note ? ` (${c.note})` : ''}\n`;
    if (c.danger) out += `  DANGER: ${c.danger}\n`;
    if (c.takeover.length > 0) {
      out += `  takeover from field manager${c.takeover.length > 1 ? 's' : ''} ${c.takeover.map((m) => `'${m}'`).join(', ')} (Update): crownlabs-composer becomes the manager of every field it renders\n`;
    }
    if (c.paths.length > 0) {
      const shown = c.paths.slice(0, MAX_PATHS).join(', ');
      out += `  fields: ${shown}${c.paths.length > MAX_PATHS ? `, … (${c.paths.length - MAX_PATHS} more)` : ''}\n`;
    }
  }
  for (const e of result.errors) out += `error   ${e}\n`;
  return out;
}

/**
 * kubectl's external diff: $KUBECTL_EXTERNAL_DIFF split at spaces, keeping only arguments made of
 * letters, digits, `-` and `=` (as kubectl does: no shell, no paths smuggled in); default `diff -u -N`.
 */
export function diffProgram(env: NodeJS.ProcessEnv = process.env): { command: string; args: string[] } {
  const external = env.KUBECTL_EXTERNAL_DIFF?.trim();
  if (!external) return { command: 'diff', args: ['-u', '-N'] };
  const [command, ...rest] = external.split(/\s+/);
  return { command, args: rest.filter((a) => /^[a-zA-Z0-9=-]+$/.test(a)) };
}

/** Writes both sides of every object and runs the diff program on the folders; an error message or undefined. */
async function printDiff(changes: readonly ObjectDiff[]): Promise<string | undefined> {
  const liveDir = mkdtempSync(join(tmpdir(), 'LIVE-'));
  const mergedDir = mkdtempSync(join(tmpdir(), 'MERGED-'));
  try {
    for (const c of changes) {
      const [live, merged] = maskSecrets(c.live, c.merged);
      const name = kubectlFileName((live ?? merged)!);
      if (live) writeFileSync(join(liveDir, name), objectToYaml(live), { mode: 0o600 });
      if (merged) writeFileSync(join(mergedDir, name), objectToYaml(merged), { mode: 0o600 });
    }
    const { command, args } = diffProgram();
    const code = await new Promise<number | string>((resolve) => {
      const child = spawn(command, [...args, liveDir, mergedDir], { stdio: ['ignore', 'inherit', 'inherit'] });
      child.on('error', (e) => resolve(`cannot run ${command}: ${e.message}${command === 'diff' ? ' (install diffutils, or set KUBECTL_EXTERNAL_DIFF)' : ''}`));
      child.on('close', (c, signal) => resolve(c ?? `${command} ended by ${signal}`));
    });
    // diff: 0 same, 1 different, 2 trouble (kubectl reads it the same way).
    if (typeof code === 'string') return code;
    return code > 1 ? `${command} exited with ${code}` : undefined;
  } finally {
    rmSync(liveDir, { recursive: true, force: true });
    rmSync(mergedDir, { recursive: true, force: true });
  }
}
