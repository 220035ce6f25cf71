import { existsSync } from 'node:fs';
import path from 'node:path';
import { findHomeDir, type KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { KubeClient } from '../kube/client.ts';
import { close, listen } from '../kube/http-endpoints.ts';
import { loadUserPodsConfig, proxyList } from '../user-pods/config.ts';
import { ExecPodFileReader } from '../user-pods/pod-files.ts';
import { userPodsHandler } from '../user-pods/server.ts';
import { UserPodsService } from '../user-pods/service.ts';
import { loadKubeConfig } from './kube.ts';
import { commandLogger } from './log.ts';
import { EXIT_INPUT } from './report.ts';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * The kubeconfig, or an error that says what is missing. Without one, the client library falls
 * back to http://localhost:8080 and the first request fails with a message about TLS settings.
 */
function kubeConfigOrError(file: string | undefined): KubeConfig | string {
  if (!file && !process.env.KUBECONFIG) {
    const home = findHomeDir();
    const found = (home && existsSync(path.join(home, '.kube', 'config'))) || existsSync(SERVICE_ACCOUNT_TOKEN);
    if (!found) return 'no kubeconfig: give --kubeconfig FILE, set KUBECONFIG, create ~/.kube/config, or run in a cluster with a service account';
  }
  const where = file ?? process.env.KUBECONFIG ?? 'the default kubeconfig';
  let kc: KubeConfig;
  try {
    kc = loadKubeConfig(file);
  } catch (e) {
    return `cannot load kubeconfig ${where}: ${(e as Error).message.split('\n')[0]}`;
  }
  if (!kc.getCurrentContext()) return `kubeconfig ${where} has no current context`;
  if (!kc.getCurrentCluster()) return `kubeconfig ${where}: no cluster for the current context "${kc.getCurrentContext()}"`;
  return kc;
}

/** `crownlabs user-pods-api`: the ScienceData user pods backend's HTTP API (seed 004) on our constructs. */
export function registerUserPodsApi(program: Command): void {
  program
    .command('user-pods-api')
    .description('serve the user pods API (get_pods, create_pod, watch_create_pod, delete_pod, watch_delete_pod, delete_all_user, get_podip_owner)')
    .option('--config <file>', 'YAML or JSON configuration (keys in docs/user-pods-api.md; BACKEND_<KEY> environment variables override it)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--listen <addr>', 'HTTP listen address', ':8080')
    .action(async (opts: { config?: string; kubeconfig?: string; listen: string }) => {
      const fail = (message: string) => {
        process.stderr.write(`crownlabs user-pods-api: ${message}\n`);
        process.exitCode = EXIT_INPUT;
      };
      const { config, problems } = loadUserPodsConfig({ file: opts.config, env: process.env });
      if (problems.length) {
        for (const p of problems) fail(p);
        return;
      }
      const kubeConfig = kubeConfigOrError(opts.kubeconfig);
      if (typeof kubeConfig === 'string') return fail(kubeConfig);
      const log = commandLogger('user-pods-api');
      const service = new UserPodsService({ client: new KubeClient(kubeConfig), config, files: new ExecPodFileReader(kubeConfig), log });
      try {
        await service.start();
      } catch (e) {
        return fail(`cannot list the user pods in namespace ${config.namespace} on ${kubeConfig.getCurrentCluster()!.server}: ${(e as Error).message.split('\n')[0]}`);
      }
      let server: Awaited<ReturnType<typeof listen>>['server'];
      try {
        const listening = await listen(opts.listen, userPodsHandler(service, { testingHost: config.testingHost, trustedProxies: proxyList(config.trustedProxies), log }));
        server = listening.server;
        log.info({ address: listening.address, namespace: config.namespace }, 'user pods API listening');
      } catch (e) {
        service.stop();
        return fail(`cannot listen on ${opts.listen}: ${(e as Error).message}`);
      }
      await new Promise<void>((resolve) => {
        const shutdown = () => {
          service.stop();
          void close(server).then(resolve);
        };
        process.once('SIGTERM', shutdown);
        process.once('SIGINT', shutdown);
      });
    });
}
