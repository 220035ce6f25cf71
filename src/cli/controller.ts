import type { Command } from 'commander';
import { pino } from 'pino';
import { startController } from '../controller/controller.ts';
import { validateKeycloakConfig } from '../integrations/keycloak/index.ts';
import { loadKubeConfig } from './kube.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { EXIT_USAGE, reportProblems } from './report.ts';

/** Parses a Go-style duration (`10h`, `90m`, `1h30m`, `45s`) into milliseconds. */
export function parseDuration(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
    consumed += m[0].length;
  }
  if (consumed !== text.length || consumed === 0) throw new Error(`invalid duration "${text}" (e.g. 10h, 90m, 1h30m)`);
  return total;
}

/** `crownlabs controller`: the in-cluster apply-controller (DESIGN.md, "The apply-controller"). */
export function registerController(program: Command): void {
  const cmd = program
    .command('controller')
    .description('run the apply-controller: watch CrownLabs resources, server-side apply what compose renders, prune, write status')
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--max-concurrent-reconciles <n>', 'reconcile workers', '1')
    .option('--enable-leader-election', 'elect a leader through a coordination.k8s.io Lease', false)
    .option('--leader-election-id <name>', 'name of the Lease', 'crownlabs-composer.crownlabs.polito.it')
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default: POD_NAMESPACE or default)')
    .option('--metrics-addr <addr>', 'Prometheus /metrics bind address', ':8080')
    .option('--health-probe-addr <addr>', '/healthz and /readyz bind address', ':8081')
    .option('--client-qps <n>', 'API client requests per second', '100')
    .option('--client-max-burst <n>', 'API client burst', '100')
    .option('--tenant-ns-keep-alive <duration>', 'how long after spec.lastLogin a personal namespace without instances is kept', '10h')
    .option('--resync-period <duration>', 'each Instance is reconciled again this long after its last success (+0–10% at random)', '10h')
    .option('--tenant-operator-rq-time-min <duration>', 'Tenants and Workspaces are requeued after a success at a random time between min…', '4h')
    .option('--tenant-operator-rq-time-max <duration>', '…and max', '8h');
  addConfigOptions(cmd);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    const { config, problems } = configFromOptions(opts);
    if (reportProblems(problems)) {
      process.exitCode = EXIT_USAGE;
      return;
    }
    let keepAlive: number;
    let resync: number;
    let rqMin: number;
    let rqMax: number;
    try {
      keepAlive = parseDuration(String(opts.tenantNsKeepAlive));
      resync = parseDuration(String(opts.resyncPeriod));
      rqMin = parseDuration(String(opts.tenantOperatorRqTimeMin));
      rqMax = parseDuration(String(opts.tenantOperatorRqTimeMax));
      if (rqMax < rqMin) throw new Error('--tenant-operator-rq-time-max must not be below --tenant-operator-rq-time-min');
      for (const [flag, value, min] of [
        ['--max-concurrent-reconciles', opts.maxConcurrentReconciles, 1],
        ['--client-qps', opts.clientQps, 0],
        ['--client-max-burst', opts.clientMaxBurst, 1],
      ] as const) {
        const n = Number(value);
        if (!Number.isFinite(n) || n < min) throw new Error(`${flag} must be a number ≥ ${min}, not "${String(value)}"`);
      }
    } catch (e) {
      process.stderr.write(`crownlabs controller: ${(e as Error).message}\n`);
      process.exitCode = EXIT_USAGE;
      return;
    }
    const kcProblems = validateKeycloakConfig({
      url: config.keycloakUrl,
      loginRealm: config.keycloakLoginRealm,
      targetRealm: config.keycloakTargetRealm,
      targetClientId: config.keycloakTargetClient,
      username: config.keycloakUser,
      password: config.keycloakPassword,
    });
    if (kcProblems.length) {
      // As upstream: an incomplete Keycloak configuration refuses to start (SPEC §2.1).
      for (const p of kcProblems) process.stderr.write(`crownlabs controller: ${p}\n`);
      process.exitCode = 1;
      return;
    }
    const log = pino({ name: 'crownlabs-controller' });
    const handle = await startController({
      kubeConfig: loadKubeConfig(opts.kubeconfig as string | undefined),
      config,
      logger: log,
      maxConcurrentReconciles: Number(opts.maxConcurrentReconciles),
      clientQps: Number(opts.clientQps),
      clientMaxBurst: Number(opts.clientMaxBurst),
      metricsAddr: String(opts.metricsAddr),
      healthProbeAddr: String(opts.healthProbeAddr),
      enableLeaderElection: opts.enableLeaderElection === true,
      leaderElectionId: String(opts.leaderElectionId),
      leaderElectionNamespace: (opts.leaderElectionNamespace as string | undefined) ?? process.env.POD_NAMESPACE ?? 'default',
      tenantNsKeepAliveMs: keepAlive,
      resyncPeriodMs: resync,
      requeueMinMs: rqMin,
      requeueMaxMs: rqMax,
      onLeadershipLost: () => process.exit(1),
    });
    log.info({ metrics: handle.metricsAddress, health: handle.healthAddress }, 'controller started');
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        log.info({ signal }, 'shutting down');
        void handle.stop().then(resolve);
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
  });
}
