import { Option, type Command } from 'commander';
import { RegistryClient } from '../integrations/registry/client.ts';
import { KubeImageListWriter, runImageListLoop, runImageListPass } from '../integrations/registry/updater.ts';
import { loadKubeConfig } from './kube.ts';
import { API_LEVELS, DEFAULT_API_LEVEL, isApiLevel, type ApiLevel } from '../inputs/api-level.ts';
import { IMAGE_LIST_LEVEL } from '../integrations/registry/image-list.ts';
import { commandLogger, lineLog } from './log.ts';
import { EXIT_INPUT, EXIT_OK, EXIT_USAGE } from './report.ts';

interface ImageListOptions {
  advertisedRegistryName: string;
  imageListName: string;
  registryUrl: string;
  registryUsername?: string;
  registryPassword?: string;
  updateInterval?: string;
  once?: boolean;
  kubeconfig?: string;
  registryTimeout: string;
  pageSize: string;
  apiLevel: string;
  projectBaseName?: string;
}

/** `crownlabs imagelist`: the ImageList producer of docs/behaviour.md §10, with upstream's flags. */
export function registerImageList(program: Command): void {
  program
    .command('imagelist')
    .description('keep the ImageList of a Docker registry (v2 API) up to date: a pass now, then one every --update-interval seconds')
    .requiredOption('--advertised-registry-name <name>', 'registry name written into the ImageList (spec.registryName)')
    .requiredOption('--image-list-name <name>', 'name of the (cluster-scoped) ImageList')
    .requiredOption('--registry-url <url>', 'base URL of the registry, e.g. http://docker-registry.docker-registry:5000')
    .addOption(new Option('--registry-username <user>', 'basic-auth user of the registry').env('CROWNLABS_REGISTRY_USERNAME'))
    .addOption(new Option('--registry-password <password>', 'basic-auth password of the registry (prefer the environment variable)').env('CROWNLABS_REGISTRY_PASSWORD'))
    .option('--update-interval <seconds>', 'seconds between passes (required unless --once)')
    .option('--once', 'run one pass and exit: 0 when the ImageList was written, 1 otherwise')
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)')
    .option('--registry-timeout <seconds>', 'timeout of each registry request', '10')
    .option('--page-size <n>', 'catalog and tag-list page size asked of the registry (?n=)', '100')
    .option('--api-level <level>', `API level of the installed ImageList CRD (${API_LEVELS.join(', ')})`, DEFAULT_API_LEVEL)
    .option('--project-base-name <name>', 'spec.projectBaseName written into the ImageList (API level e62be9e only)')
    .action(async (opts: ImageListOptions) => {
      process.exitCode = await runImageList(opts);
    });
}

function whole(value: string | undefined, flag: string, max: number): number | string {
  if (value === undefined) return `${flag} is required (unless --once)`;
  const n = value !== undefined && /^\s*\d+\s*$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(n) && n >= 1 && n <= max ? n : `${flag} must be a whole number from 1 to ${max}, not "${value ?? ''}"`;
}

export async function runImageList(opts: ImageListOptions): Promise<number> {
  // Seconds up to an hour for a request, a week between passes; pages as large as registries serve.
  const timeout = whole(opts.registryTimeout, '--registry-timeout', 3600);
  const pageSize = whole(opts.pageSize, '--page-size', 10_000);
  const interval = opts.once ? 1 : whole(opts.updateInterval, '--update-interval', 604_800);
  const levelProblem = !isApiLevel(opts.apiLevel)
    ? `--api-level must be one of ${API_LEVELS.join(', ')}, not "${opts.apiLevel}"`
    : opts.projectBaseName !== undefined && !IMAGE_LIST_LEVEL[opts.apiLevel].projectBaseName
      ? `--project-base-name needs --api-level e62be9e: the ImageList of ${opts.apiLevel} has no projectBaseName`
      : undefined;
  for (const v of [timeout, pageSize, interval, levelProblem ?? 0]) {
    if (typeof v === 'string') {
      process.stderr.write(`crownlabs imagelist: ${v}\n`);
      return EXIT_USAGE;
    }
  }
  let kubeConfig;
  try {
    kubeConfig = loadKubeConfig(opts.kubeconfig);
  } catch (e) {
    process.stderr.write(`crownlabs imagelist: ${(e as Error).message.split('\n')[0]}\n`);
    return EXIT_INPUT;
  }
  const log = lineLog(commandLogger('imagelist'));
  const pass = {
    registry: new RegistryClient({
      url: opts.registryUrl,
      username: opts.registryUsername,
      password: opts.registryPassword,
      timeoutMs: (timeout as number) * 1000,
      pageSize: Math.floor(pageSize as number),
    }),
    writer: new KubeImageListWriter(kubeConfig),
    advertisedRegistryName: opts.advertisedRegistryName,
    apiLevel: opts.apiLevel as ApiLevel,
    projectBaseName: opts.projectBaseName,
    imageListName: opts.imageListName,
    log,
  };
  if (opts.once) return (await runImageListPass(pass)).ok ? EXIT_OK : EXIT_INPUT;
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  await runImageListLoop({ ...pass, intervalSeconds: interval as number, signal: stop.signal });
  return EXIT_OK;
}
