import { Option, type Command } from 'commander';
import { DEFAULT_AUTHORIZED_KEYS_PATH } from '../bastion/keys-file.ts';
import { DEFAULT_SSH_METRIC_NAME, serveTrackerHttp, SshConnectionTracker } from '../bastion/ssh-tracker.ts';
import { runBastionKeys } from '../bastion/tenant-watch.ts';
import { loadKubeConfig } from './kube.ts';
import { commandLogger, lineLog } from './log.ts';
import { EXIT_INPUT, EXIT_OK, EXIT_USAGE } from './report.ts';


function stopSignal(): AbortSignal {
  const stop = new AbortController();
  process.once('SIGTERM', () => stop.abort());
  process.once('SIGINT', () => stop.abort());
  return stop.signal;
}

/** `crownlabs bastion-keys` and `crownlabs ssh-tracker`: the two sidecars of the SSH bastion (docs/behaviour.md §12, §15.4). */
export function registerBastion(program: Command): void {
  program
    .command('bastion-keys')
    .description("keep the bastion's authorized_keys file in step with every Tenant's spec.publicKeys (watch)")
    .addOption(new Option('--authorized-keys-path <file>', 'authorized_keys file to maintain').env('AUTHORIZED_KEYS_PATH').default(DEFAULT_AUTHORIZED_KEYS_PATH))
    .option('--kubeconfig <file>', 'kubeconfig (default: $KUBECONFIG, ~/.kube/config, or the in-cluster service account)')
    .action(async (opts: { authorizedKeysPath: string; kubeconfig?: string }) => {
      let kubeConfig;
      try {
        kubeConfig = loadKubeConfig(opts.kubeconfig);
      } catch (e) {
        process.stderr.write(`crownlabs bastion-keys: ${(e as Error).message.split('\n')[0]}\n`);
        process.exitCode = EXIT_INPUT;
        return;
      }
      await runBastionKeys({ kubeConfig, path: opts.authorizedKeysPath, log: lineLog(commandLogger('bastion-keys')), signal: stopSignal() });
      process.exitCode = EXIT_OK;
    });

  program
    .command('ssh-tracker')
    .description('count new SSH connections leaving this network namespace (tcpdump SYN capture) as a Prometheus counter')
    .option('--metrics-addr <addr>', 'listen address of /metrics and /healthz', ':9090')
    .option('--ssh-tracker-metric-name <name>', 'name of the counter', DEFAULT_SSH_METRIC_NAME)
    .option('--interface <name>', 'capture interface', 'any')
    .option('--tcpdump <path>', 'tcpdump binary', 'tcpdump')
    .action(async (opts: { metricsAddr: string; sshTrackerMetricName: string; interface: string; tcpdump: string }) => {
      const log = lineLog(commandLogger('ssh-tracker'));
      const tracker = new SshConnectionTracker({ iface: opts.interface, metricName: opts.sshTrackerMetricName, command: opts.tcpdump, log });
      let server;
      try {
        server = await serveTrackerHttp(tracker, opts.metricsAddr);
      } catch (err) {
        process.stderr.write(`crownlabs ssh-tracker: cannot listen on ${opts.metricsAddr}: ${(err as Error).message}\n`);
        process.exitCode = EXIT_USAGE;
        return;
      }
      log(`ssh-tracker: /metrics and /healthz on ${opts.metricsAddr}`);
      tracker.start();
      const signal = stopSignal();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      await tracker.stop();
      await new Promise((r) => server.close(r));
      process.exitCode = EXIT_OK;
    });
}
