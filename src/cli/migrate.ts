/**
 * `crownlabs migrate`: CrownLabs resources of API level 2e8aeb9 rewritten into e62be9e shape
 * (docs/behaviour.md §16.5; the mapping is src/migrate/level-migration.ts). Inputs are validated at
 * 2e8aeb9 and every result at e62be9e before anything is written. Three ways:
 *   -f PATH…            → e62be9e YAML on stdout, or one file per input file in -o DIR (atomic, locked);
 *   --from-cluster      → the live objects (CRDs still at 2e8aeb9): what each becomes, nothing written;
 *   -f COPY… --apply    → a copy of the live objects taken before the CRDs were upgraded, written back
 *                         over the live ones (CRDs at e62be9e) by update with the copy's resourceVersion.
 */
import { basename, join, relative } from 'node:path';
import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { crdsLevelProblem, crownlabsCrdsDir, LEVEL_MARKS, levelOfCrds, type ApiLevel, type CrdLike } from '../inputs/api-level.ts';
import { STDIN_PATH } from '../inputs/input-file.ts';
import { checkObject, expandInputPaths, readInputs, type Source, type SourcedObject } from '../inputs/parse.ts';
import { formatProblem, type Problem } from '../inputs/problems.ts';
import { INPUT_KINDS, objectKey, type InputKind, type KubeObject } from '../inputs/types.ts';
import { e62be9eProblems } from '../migrate/check.ts';
import { migrateObjects, type ObjectMigration } from '../migrate/level-migration.ts';
import { statusWrite } from '../migrate/status-write.ts';
import { holdOutputFolder, writeTreeAtomically } from '../sinks/atomic-tree.ts';
import { objectFileName } from '../sinks/gitops.ts';
import { configureOutputLock, DEFAULT_LOCK_TIMEOUT_S } from '../sinks/output-lock.ts';
import { objectsToYaml } from '../sinks/yaml-emitter.ts';
import { isConflict, isNotFound, KubeApiError, KubeClient } from '../kube/client.ts';
import { loadKubeConfig } from './kube.ts';
import { MAX_LOCK_TIMEOUT_S, wholeNumber } from './numeric-flags.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { reportOutputError, writeStdout } from './report.ts';
import { stdinIfNamed, stdinUsageError, usageError } from './stdin.ts';

/** 0: every value carried; 3: written, but some values were not carried (warnings); 1: errors, nothing written; 2: usage. */
export const MIGRATE_EXIT = { carried: 0, error: 1, usage: 2, notCarried: 3 } as const;

interface MigrateOptions {
  file?: string[];
  fromCluster?: boolean;
  apply?: boolean;
  output?: string;
  kubeconfig?: string;
  namespace?: string;
  quiet?: boolean;
  lockTimeout?: number;
  [key: string]: unknown;
}

/** What problems about objects read from the API server name as their file. */
const CLUSTER = '<cluster>';

/** The CrownLabs kinds migrate reads from the cluster (SharedVolume exists at e62be9e only). */
const CLUSTER_KINDS: InputKind[] = ['Workspace', 'Tenant', 'Template', 'Instance', 'InstanceSnapshot', 'ImageList'];

export function registerMigrate(program: Command): void {
  const cmd = program
    .command('migrate')
    .description(
      'rewrite CrownLabs resources from API level 2e8aeb9 into e62be9e shape (docs/behaviour.md §16.5): inputs validated at 2e8aeb9, results at e62be9e; ' +
        'values that cannot be carried are reported. Exit 0: all carried, 3: written but some values not carried, 1: errors (nothing written), 2: usage',
    )
    .option('-f, --file <path...>', 'input files or folders of 2e8aeb9 objects (YAML, multi-document; folders are read recursively); - reads standard input')
    .option('-o, --output <dir>', 'write the e62be9e objects into this folder (one file per input file; crash-safe, as synth -o) instead of stdout')
    .option('--from-cluster', 'read the live objects (the CRDs must still be at 2e8aeb9) and print what each becomes; writes nothing to the cluster')
    .option('--apply', 'with -f COPY: write the migrated objects over the live ones (the CRDs must be at e62be9e), by update with the resourceVersion of the copy; see docs/cli.md for the order of a live upgrade')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('-n, --namespace <namespace>', 'with --from-cluster: only objects in this namespace (cluster-scoped objects are left out)')
    .option('-q, --quiet', 'do not print warnings')
    .option('--lock-timeout <s>', `seconds to wait, 0 to ${MAX_LOCK_TIMEOUT_S}, while another crownlabs run writes the same -o folder`, wholeNumber(0, MAX_LOCK_TIMEOUT_S), DEFAULT_LOCK_TIMEOUT_S);
  addConfigOptions(cmd).action(async (opts: MigrateOptions) => {
    process.exitCode = await runMigrate(opts);
  });
}

export async function runMigrate(opts: MigrateOptions): Promise<number> {
  const hasFiles = (opts.file ?? []).length > 0;
  if (hasFiles === !!opts.fromCluster) return usageError('migrate', 'give the inputs with -f PATH…, or --from-cluster (one of the two)');
  if (opts.apply && opts.fromCluster) {
    return usageError(
      'migrate',
      '--apply takes a copy of the live objects (-f COPY), not --from-cluster: the CRDs must be at 2e8aeb9 to read the old fields and at e62be9e to write the new ones (docs/cli.md, "Moving a live lab")',
    );
  }
  if (opts.apply && opts.output) return usageError('migrate', '--apply writes to the cluster; -o writes files: give one of the two');
  const usage = stdinUsageError('migrate', opts.file);
  if (usage !== undefined) return usage;
  const { config, problems: configProblems } = configFromOptions(opts);
  if (configProblems.some((p) => p.severity === 'error')) return report(configProblems, opts.quiet);

  let client: KubeClient | undefined;
  if (opts.fromCluster || opts.apply) {
    try {
      client = new KubeClient(loadKubeConfig(opts.kubeconfig));
    } catch (e) {
      return fail(`kubeconfig: ${(e as Error).message}`);
    }
  }

  let inputs: { objects: SourcedObject[]; problems: Problem[] };
  try {
    if (opts.fromCluster) inputs = await readCluster(client!, opts.namespace);
    else {
      const stdin = await stdinIfNamed(opts.file, config.inputMaxFileSize);
      inputs = readInputs(opts.file!, { maxFileBytes: config.inputMaxFileSize, stdin, level: '2e8aeb9' });
    }
  } catch (e) {
    return fail((e as Error).message);
  }
  if (inputs.problems.some((p) => p.severity === 'error')) return report(inputs.problems, opts.quiet, 'input errors: nothing migrated');

  const migrations = migrateObjects(inputs.objects.map((o) => o.object as KubeObject));
  const problems = [...inputs.problems];
  migrations.forEach((m, i) => {
    const mine = placed(m.problems, inputs.objects[i].source);
    // A field the mapping refused already is not reported a second time by the schema.
    const refused = new Set(mine.filter((p) => p.severity === 'error').map((p) => p.field));
    problems.push(...mine, ...validateAtE62be9e(m, inputs.objects[i].source).filter((p) => !refused.has(p.field)));
  });
  if (opts.apply) problems.push(...copyProblems(migrations, inputs.objects));
  const errors = problems.filter((p) => p.severity === 'error').length;

  const toStdout = !opts.output && !opts.apply && !opts.fromCluster;
  if (!toStdout) await writeStdout(movesReport(migrations, inputs.objects));
  if (errors > 0) return report(problems, opts.quiet, 'nothing written');
  printProblems(problems, opts.quiet);
  const notCarried = problems.some((p) => p.severity === 'warning' && p.kind !== undefined);

  let code: number = MIGRATE_EXIT.carried;
  if (opts.apply) code = await applyCopy(client!, migrations);
  else if (opts.output) code = writeFolder(opts, migrations, inputs.objects);
  else if (toStdout) code = await writeStdout(objectsToYaml(migrations.map((m) => m.after)));
  if (code !== MIGRATE_EXIT.carried) return code;
  return notCarried ? MIGRATE_EXIT.notCarried : MIGRATE_EXIT.carried;
}

function fail(message: string): number {
  process.stderr.write(`crownlabs migrate: ${message}\n`);
  return MIGRATE_EXIT.error;
}

function printProblems(problems: readonly Problem[], quiet = false): void {
  for (const p of problems) if (p.severity === 'error' || !quiet) process.stderr.write(`${formatProblem(p)}\n`);
}

function report(problems: readonly Problem[], quiet = false, what = 'nothing written'): number {
  printProblems(problems, quiet);
  const n = problems.filter((p) => p.severity === 'error').length;
  process.stderr.write(`${n} error${n === 1 ? '' : 's'}: ${what}\n`);
  return MIGRATE_EXIT.error;
}

/** The mapping's problems with the file and document of the object they are about. */
function placed(problems: readonly Problem[], source: Source): Problem[] {
  return problems.map((p) => ({
    ...p,
    file: source.file,
    ...(source.file === CLUSTER ? {} : { document: source.document }),
    ...(source.item !== undefined && p.field ? { field: `items[${source.item}].${p.field}` } : {}),
  }));
}

/** The result checked at e62be9e (src/migrate/check.ts); live objects have no document. */
function validateAtE62be9e(m: ObjectMigration, source: Source): Problem[] {
  return e62be9eProblems(m.after, source).map((p) => (source.file === CLUSTER ? { ...p, document: undefined } : p));
}

/** The live objects of the CrownLabs kinds, as sourced objects validated at 2e8aeb9 (the CRDs must be at 2e8aeb9). */
async function readCluster(client: KubeClient, namespace: string | undefined): Promise<{ objects: SourcedObject[]; problems: Problem[] }> {
  const level = await installedLevel(client);
  if (level !== '2e8aeb9') {
    throw new Error(
      `the cluster at ${client.server} serves the CrownLabs CRDs of ${level}: the API server no longer returns the fields e62be9e dropped (it prunes them on read), so the live objects cannot be migrated from it. Migrate the copy taken before the CRDs were upgraded: crownlabs migrate -f COPY --apply (docs/cli.md, "Moving a live lab")`,
    );
  }
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  for (const kind of CLUSTER_KINDS) {
    const { apiVersion, namespaced, plural } = INPUT_KINDS[kind];
    if (namespace && !namespaced) continue;
    let items: KubeObject[];
    try {
      // By the input kinds' table: the client's own (src/kube/resources.ts) holds only the kinds the features write.
      const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
      items = (await client.request<{ items: KubeObject[] }>('GET', `/apis/${apiVersion}${ns}/${plural}`)).items;
    } catch (e) {
      throw new Error(isNotFound(e) ? `the server does not serve ${kind} (is its CRD installed?)` : `cannot list ${kind} at ${client.server}: ${firstLine((e as Error).message)}`);
    }
    for (const item of items) {
      // A list's items carry no kind; managedFields are the server's bookkeeping, not the object's.
      const { managedFields: _, ...metadata } = item.metadata;
      checkObject({ ...item, apiVersion, kind, metadata }, { file: CLUSTER, document: 0 }, problems, objects, '', '2e8aeb9');
    }
  }
  return { objects, problems: problems.map((p) => ({ ...p, document: undefined })) };
}

/**
 * The level of the CrownLabs CRDs the cluster serves, as the controller tells it (`levelOfCrds`); an
 * error when they disagree (a half-upgraded install), are missing or cannot be read.
 */
async function installedLevel(client: KubeClient): Promise<ApiLevel> {
  const crds: CrdLike[] = [];
  for (const { crd: name } of LEVEL_MARKS) {
    try {
      crds.push(await client.request<CrdLike>('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`));
    } catch (e) {
      if (!isNotFound(e)) throw new Error(`cannot read the CRD ${name} at ${client.server}: ${firstLine((e as Error).message)}`);
    }
  }
  const found = levelOfCrds(crds);
  if (found.kind === 'level') return found.level;
  throw new Error(`${crdsLevelProblem(found)} at ${client.server}: install one level's CRDs (${crownlabsCrdsDir('e62be9e')})`);
}

/** One block per object: what moved, what was removed or added (stdout when it holds no YAML). */
function movesReport(migrations: readonly ObjectMigration[], sources: readonly SourcedObject[]): string {
  let out = '';
  let changed = 0;
  migrations.forEach((m, i) => {
    const src = sources[i].source;
    const where = src.file === CLUSTER ? '' : ` (${src.file}, document ${src.document})`;
    if (m.moves.length === 0) {
      out += `unchanged ${m.before.kind} ${objectKey(m.before)}${where}\n`;
      return;
    }
    changed++;
    out += `migrate   ${m.before.kind} ${objectKey(m.before)}${where}\n`;
    for (const mv of m.moves) {
      const note = mv.note ? ` (${mv.note})` : '';
      if (mv.from && mv.to && mv.from !== mv.to) out += `  moved    ${mv.from} → ${mv.to}${note}\n`;
      else if (mv.from && mv.to) out += `  changed  ${mv.from}${note}\n`;
      else if (mv.from) out += `  removed  ${mv.from}${note}\n`;
      else out += `  added    ${mv.to}${note}\n`;
    }
  });
  return `${out}${changed} to migrate, ${migrations.length - changed} unchanged\n`;
}

/** Output file names: an input file's path below the folder it was found in, or its own name. */
function outputNames(paths: readonly string[], cwd = process.cwd()): Map<string, string> {
  const names = new Map<string, string>();
  for (const arg of paths) {
    if (arg === STDIN_PATH) {
      names.set('<stdin>', 'stdin.yaml');
      continue;
    }
    const isDir = (() => {
      try {
        return statSync(arg).isDirectory();
      } catch {
        return false;
      }
    })();
    for (const file of expandInputPaths([arg]).files) {
      const shown = relative(cwd, file) || file;
      if (!names.has(shown)) names.set(shown, isDir ? relative(arg, file) : basename(file));
    }
  }
  return names;
}

function writeFolder(opts: MigrateOptions, migrations: readonly ObjectMigration[], sources: readonly SourcedObject[]): number {
  const dir = opts.output!;
  const fromFiles = !opts.fromCluster;
  const names = fromFiles ? outputNames(opts.file!) : new Map<string, string>();
  const byFile = new Map<string, KubeObject[]>();
  const origin = new Map<string, string>();
  for (const [i, m] of migrations.entries()) {
    const shown = sources[i].source.file;
    const name = fromFiles ? (names.get(shown) ?? basename(shown)) : objectFileName(m.after);
    // Two input files of one name (given as files from two folders) would land on one output file.
    if (origin.has(name) && origin.get(name) !== shown) return fail(`${shown} and ${origin.get(name)} would both be written to ${join(dir, name)}: give their folder instead; nothing written`);
    origin.set(name, shown);
    byFile.set(name, [...(byFile.get(name) ?? []), m.after]);
  }
  configureOutputLock({ timeoutMs: (opts.lockTimeout ?? DEFAULT_LOCK_TIMEOUT_S) * 1000 });
  const inputs = opts.file ?? [];
  try {
    const release = holdOutputFolder(dir, inputs);
    try {
      const files = new Map([...byFile].map(([name, objs]) => [name, objectsToYaml(objs)]));
      const r = writeTreeAtomically(dir, files, { inputs });
      process.stderr.write(`${migrations.length} objects → ${dir} (${r.written} written, ${r.unchanged} unchanged, ${r.removed} removed)\n`);
    } finally {
      release();
    }
  } catch (e) {
    return reportOutputError(e);
  }
  return MIGRATE_EXIT.carried;
}

/** --apply writes back a copy of live objects: each must carry the uid and resourceVersion it was read with. */
function copyProblems(migrations: readonly ObjectMigration[], sources: readonly SourcedObject[]): Problem[] {
  const out: Problem[] = [];
  migrations.forEach((m, i) => {
    if (m.moves.length === 0) return;
    const meta = m.before.metadata;
    if (!meta.resourceVersion || !meta.uid) {
      const src = sources[i].source;
      out.push({ severity: 'error', file: src.file, document: src.document, kind: m.before.kind, name: objectKey(m.before), field: 'metadata.resourceVersion', message: '--apply writes back objects read from the cluster: this one has no uid and resourceVersion (take the copy with kubectl get -o yaml)' });
    }
  });
  return out;
}

/** The body of the update: the migrated object as the copy was read, without the server's bookkeeping. */
function updateBody(obj: KubeObject): KubeObject {
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/**
 * Writes the migrated copies over the live objects. Every update is first sent as a server-side
 * dry run, so a refusal (a conflict, a CRD still at 2e8aeb9, a webhook) writes nothing; then each
 * object is updated with its copy's resourceVersion (409 if it changed since the copy), and its
 * status through the status subresource when migrate changed it (status-write.ts): an Instance's,
 * which holds the automation times the controller cannot recompute, or a dropped one cleared.
 */
async function applyCopy(client: KubeClient, migrations: readonly ObjectMigration[]): Promise<number> {
  let level: ApiLevel;
  try {
    level = await installedLevel(client);
  } catch (e) {
    return fail((e as Error).message);
  }
  if (level !== 'e62be9e') {
    return fail(`the cluster at ${client.server} still serves the CrownLabs CRDs of ${level}: they would drop the e62be9e fields. Install the e62be9e CRDs first (docs/cli.md, "Moving a live lab"); nothing written`);
  }
  const todo = migrations.filter((m) => m.moves.length > 0);
  const path = (o: KubeObject, sub?: string) => client.path(o.apiVersion, o.kind, o.metadata.namespace, o.metadata.name, sub);
  const why = (m: ObjectMigration, e: unknown) =>
    `${m.before.kind} ${objectKey(m.before)}: ${isConflict(e) ? `changed in the cluster since the copy was taken (resourceVersion ${m.before.metadata.resourceVersion}): not written; migrate it by hand` : e instanceof KubeApiError ? firstLine(e.message) : (e as Error).message}`;
  const refused: string[] = [];
  for (const m of todo) {
    try {
      await client.request('PUT', path(m.after), { body: updateBody(m.after), query: { dryRun: 'All' } });
    } catch (e) {
      refused.push(why(m, e));
    }
  }
  if (refused.length > 0) {
    for (const r of refused) process.stderr.write(`error   ${r}\n`);
    return fail(`${refused.length} of ${todo.length} updates refused by the server's dry run: nothing written`);
  }
  let failed = 0;
  for (const m of todo) {
    try {
      const body = updateBody(m.after);
      const written = await client.request<KubeObject>('PUT', path(m.after), { body });
      process.stdout.write(`updated   ${m.after.kind} ${objectKey(m.after)}\n`);
      const status = statusWrite(m);
      if (status) {
        // The body without a status clears it (the status subresource replaces the whole stanza).
        const { status: _, ...cleared } = body;
        const statusBody = status === 'set' ? body : cleared;
        await client.request('PUT', path(m.after, 'status'), { body: { ...statusBody, metadata: { ...statusBody.metadata, resourceVersion: written.metadata.resourceVersion } } });
        process.stdout.write(`${status === 'set' ? 'updated' : 'cleared'}   ${m.after.kind} ${objectKey(m.after)} status\n`);
      }
    } catch (e) {
      failed++;
      process.stderr.write(`error   ${why(m, e)}\n`);
    }
  }
  if (failed > 0) return fail(`${failed} of ${todo.length} objects not written (the others were)`);
  return MIGRATE_EXIT.carried;
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
