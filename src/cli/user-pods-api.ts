import type { Command } from 'commander';
import { pino } from 'pino';
import { KubeClient } from '../controller/kube-client.ts';
import { close, listen } from '../controller/http-endpoints.ts';
import { loadUserPodsConfig, proxyList } from '../userpods/config.ts';
import { ExecPodFileReader } from '../userpods/pod-files.ts';
import { userPodsHandler } from '../userpods/server.ts';
import { UserPodsService } from '../userpods/service.ts';
import { loadKubeConfig } from './kube.ts';
import { EXIT_USAGE } from './report.ts';

/** `crownlabs user-pods-api`: the ScienceData user pods backend's HTTP API (seed 004) on our constructs. */
export function registerUserPodsApi(program: Command): void {
  program
    .command('user-pods-api')
    .description('serve the user pods API (get_pods, create_pod, watch_create_pod, delete_pod, watch_delete_pod, delete_all_user, get_podip_owner)')
    .option('--config <file>', 'YAML or JSON configuration (keys as in the README; BACKEND_<KEY> environment variables override it)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--listen <addr>', 'HTTP listen address', ':8080')
    .action(async (opts: { config?: string; kubeconfig?: string; listen: string }) => {
      const { config, problems } = loadUserPodsConfig({ file: opts.config, env: process.env });
      if (problems.length) {
        for (const p of problems) process.stderr.write(`crownlabs user-pods-api: ${p}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      const log = pino({ name: 'crownlabs-user-pods-api' });
      const kubeConfig = loadKubeConfig(opts.kubeconfig);
      const service = new UserPodsService({ client: new KubeClient(kubeConfig), config, files: new ExecPodFileReader(kubeConfig), log });
      await service.start();
      const { server, address } = await listen(opts.listen, userPodsHandler(service, { testingHost: config.testingHost, trustedProxies: proxyList(config.trustedProxies), log }));
      log.info({ address, namespace: config.namespace }, 'user pods API listening');
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
