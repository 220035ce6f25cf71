import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { KubeConfig } from '@kubernetes/client-node';
import { cookieSecretSeedProblem } from '../config/config.ts';
import { startController, type ControllerOptions } from '../controller/controller.ts';
import { formatProblem, hasErrors } from '../inputs/problems.ts';
import { validateKeycloakConfig } from '../integrations/keycloak/index.ts';
import { parseAddr } from '../kube/http-endpoints.ts';
import { isLoopbackHost } from '../kube/loopback.ts';
import { parseDuration } from '../model/duration.ts';
import { DEFAULT_CERT_DIR, DEFAULT_WEBHOOK_PORT, startWebhookServer, type WebhookServerOptions } from '../webhooks/server.ts';
import { applyHeapGrowth, HEAP_GROWING_PERCENT } from './heap-growth.ts';
import { checkApiServer, loadKubeConfig } from './kube.ts';
import { commandLogger } from './log.ts';
import { addConfigOptions, configFromOptions } from './options.ts';
import { addInactivityOptions, inactivityFromFlags } from './inactivity-flags.ts';
import type { InactivityOptions } from '../controller/automation-state.ts';
import { EXIT_USAGE } from './report.ts';

/** The webhook server's own settings, from the `--webhook-*` flags. */
export type WebhookFlags = Pick<WebhookServerOptions, 'port' | 'host' | 'certDir' | 'bypassGroups'>;

export { parseDuration };

/**
 * The webhook server settings from the flags: undefined when turned off, 'no-certificate' when the
 * default cert dir (not given explicitly) holds no certificate, as on a developer's machine.
 */
export function webhookOptions(opts: Record<string, string | boolean | undefined>): WebhookFlags | 'no-certificate' | undefined {
  const portText = String(opts.webhookPort ?? '').trim();
  if (portText === '' || portText === '0') return undefined;
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`--webhook-port must be a port number (0 or empty: off), not "${portText}"`);
  const host = typeof opts.webhookHost === 'string' && opts.webhookHost ? parseAddr(`${opts.webhookHost}:${port}`).host : undefined;
  const bypassGroups = String(opts.webhookBypassGroups ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const given = typeof opts.webhookCertDir === 'string' && opts.webhookCertDir !== '';
  const certDir = given ? String(opts.webhookCertDir) : DEFAULT_CERT_DIR;
  if (!given && !existsSync(path.join(certDir, 'tls.crt'))) return 'no-certificate';
  return { port, host, certDir, bypassGroups };
}

/** The flags of `crownlabs controller` (also read by the tests that run it as installed, from the rendered Deployment's args). */
export function addControllerFlags(cmd: Command): Command {
  return addInactivityOptions(cmd)
    .option('--kubeconfig <file>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config or in-cluster)')
    .option('--max-concurrent-reconciles <n>', 'reconcile workers', '1')
    .option('--enable-leader-election', 'elect a leader through a coordination.k8s.io Lease', false)
    .option('--leader-election-id <name>', 'name of the Lease', 'crownlabs-composer.crownlabs.polito.it')
    .option('--leader-election-namespace <ns>', 'namespace of the Lease (default: POD_NAMESPACE or default)')
    .option('--metrics-addr <addr>', 'Prometheus /metrics bind address', ':8080')
    .option('--metrics-secure', 'serve /metrics over HTTPS to bearer tokens the API server authenticates (TokenReview) and authorises for get /metrics (SubjectAccessReview)', true)
    .option('--no-metrics-secure', 'serve /metrics over plain HTTP to anyone (loopback or development)')
    .option('--metrics-cert-dir <dir>', 'directory holding the metrics server\'s tls.crt and tls.key, re-read when they change (default: a self-signed certificate)')
    .option('--health-probe-addr <addr>', '/healthz and /readyz bind address', ':8081')
    .option('--client-qps <n>', "API client requests per second for each resource type (an Instance's writes and its status writes share one), as the Go operators' --client-qps: the value a Go operator ran with gives the same throughput (0: no limit)", '100')
    .option('--client-max-burst <n>', "API client burst for each resource type, as the Go operators' --client-max-burst", '100')
    .option('--tenant-ns-keep-alive <duration>', 'how long after spec.lastLogin a personal namespace without instances is kept', '10h')
    .option('--resync-period <duration>', 'each Instance is reconciled again this long after its last success (+0–10% at random)', '10h')
    .option('--tenant-operator-rq-time-min <duration>', 'Tenants and Workspaces are requeued after a success at a random time between min…', '4h')
    .option('--tenant-operator-rq-time-max <duration>', '…and max', '8h')
    .option('--webhook-port <port>', 'port of the Tenant admission webhooks (HTTPS); 0 or empty: no webhook server', String(DEFAULT_WEBHOOK_PORT))
    .option('--webhook-host <host>', 'address the webhook server binds (default: all interfaces)')
    .option('--webhook-cert-dir <dir>', `directory holding the webhooks' tls.crt and tls.key, re-read when they change (default ${DEFAULT_CERT_DIR}; when not given and empty there, the webhooks are off)`)
    .option('--webhook-bypass-groups <groups>', 'comma-separated groups whose requests skip the webhook checks', 'system:masters')
    .option('--enable-instance-termination', 'stop Instances whose status-check URL answers 404 (docs/behaviour.md §8.1)', false)
    .option('--instance-termination-status-check-timeout <duration>', 'HTTP timeout of the status check', '3s')
    .option('--instance-termination-status-check-interval <duration>', 'time between two status checks of an Instance', '2m')
    .option('--enable-instance-submission', 'upload a terminated persistent Instance\'s content with a submitter Job (docs/behaviour.md §8.2)', false)
    .option('--enable-instance-expiration', 'delete Instances older than their Template\'s deleteAfter (docs/behaviour.md §8.3)', false)
    .option('--expiration-dry-run', 'expiration only sends server-side dry-run deletes (logged and recorded as Events)', false);
}

/** What the flags, configuration and environment of `crownlabs controller` start, short of the API server. */
export interface ControllerRun {
  /** The configuration's warnings, to print. */
  warnings: string[];
  kubeconfig?: string;
  options: Omit<ControllerOptions, 'kubeConfig' | 'logger' | 'webhook' | 'onLeadershipLost' | 'onApiLevelChange' | 'signal'>;
  webhook?: WebhookFlags | 'no-certificate';
}

/**
 * Reads the parsed flags (with `--config` and the environment) into what the controller starts
 * with; or the exit code and the lines to print (2: usage; 1: a configuration that cannot run).
 */
export function controllerRunFromFlags(opts: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = process.env): { run: ControllerRun } | { exitCode: number; lines: string[] } {
  const { config, problems } = configFromOptions(opts, env);
  // The controller writes the per-instance Secrets: it never starts with a seed anyone could guess.
  const seed = cookieSecretSeedProblem(config);
  if (seed) problems.push(seed);
  if (hasErrors(problems)) {
    const errors = problems.filter((p) => p.severity === 'error').length;
    return { exitCode: EXIT_USAGE, lines: [...problems.map(formatProblem), `${errors} error${errors === 1 ? '' : 's'}: nothing was written`] };
  }
  let keepAlive: number;
  let resync: number;
  let webhook: WebhookFlags | 'no-certificate' | undefined;
  let statusCheckTimeout: number;
  let statusCheckInterval: number;
  let rqMin: number;
  let rqMax: number;
  let inactivity: InactivityOptions | undefined;
  try {
    keepAlive = parseDuration(String(opts.tenantNsKeepAlive));
    resync = parseDuration(String(opts.resyncPeriod));
    rqMin = parseDuration(String(opts.tenantOperatorRqTimeMin));
    rqMax = parseDuration(String(opts.tenantOperatorRqTimeMax));
    if (rqMax < rqMin) throw new Error('--tenant-operator-rq-time-max must not be below --tenant-operator-rq-time-min');
    statusCheckTimeout = parseDuration(String(opts.instanceTerminationStatusCheckTimeout));
    statusCheckInterval = parseDuration(String(opts.instanceTerminationStatusCheckInterval));
    if (statusCheckTimeout <= 0 || statusCheckInterval <= 0) throw new Error('the status-check timeout and interval must be positive');
    for (const [flag, value, min, max, whole] of [
      ['--max-concurrent-reconciles', opts.maxConcurrentReconciles, 1, 1000, true],
      ['--client-qps', opts.clientQps, 0, 100_000, false],
      ['--client-max-burst', opts.clientMaxBurst, 1, 100_000, true],
    ] as const) {
      const text = String(value).trim();
      const n = (whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(text) ? Number(text) : NaN;
      if (!(n >= min && n <= max)) throw new Error(`${flag} must be a ${whole ? 'whole ' : ''}number from ${min} to ${max}, not "${String(value)}"`);
    }
    webhook = webhookOptions(opts);
    inactivity = inactivityFromFlags(opts);
  } catch (e) {
    return { exitCode: EXIT_USAGE, lines: [`crownlabs controller: ${(e as Error).message}`] };
  }
  const kcProblems = validateKeycloakConfig({
    url: config.keycloakUrl,
    loginRealm: config.keycloakLoginRealm,
    targetRealm: config.keycloakTargetRealm,
    targetClientId: config.keycloakTargetClient,
    username: config.keycloakUser,
    password: config.keycloakPassword,
  });
  // As upstream: an incomplete Keycloak configuration refuses to start (docs/behaviour.md §2.1).
  if (kcProblems.length) return { exitCode: 1, lines: kcProblems.map((p) => `crownlabs controller: ${p}`) };
  // The local settings first: a given cert dir without its key pair fails before the cluster is asked.
  if (webhook !== undefined && webhook !== 'no-certificate') {
    for (const f of ['tls.crt', 'tls.key']) {
      const file = path.join(webhook.certDir, f);
      try {
        accessSync(file, constants.R_OK);
      } catch (e) {
        return { exitCode: 1, lines: [`crownlabs controller: webhook server: ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`] };
      }
    }
  }
  return {
    run: {
      warnings: problems.map(formatProblem),
      kubeconfig: opts.kubeconfig as string | undefined,
      webhook,
      options: {
        config,
        maxConcurrentReconciles: Number(opts.maxConcurrentReconciles),
        clientQps: Number(opts.clientQps),
        clientMaxBurst: Number(opts.clientMaxBurst),
        metricsAddr: String(opts.metricsAddr),
        metricsSecure: opts.metricsSecure !== false ? { certDir: (opts.metricsCertDir as string | undefined) || undefined } : undefined,
        healthProbeAddr: String(opts.healthProbeAddr),
        enableLeaderElection: opts.enableLeaderElection === true,
        leaderElectionId: String(opts.leaderElectionId),
        leaderElectionNamespace: (opts.leaderElectionNamespace as string | undefined) ?? env.POD_NAMESPACE ?? 'default',
        tenantNsKeepAliveMs: keepAlive,
        resyncPeriodMs: resync,
        requeueMinMs: rqMin,
        requeueMaxMs: rqMax,
        automation: {
          termination: opts.enableInstanceTermination === true,
          submission: opts.enableInstanceSubmission === true,
          expiration: opts.enableInstanceExpiration === true,
          statusCheckTimeoutMs: statusCheckTimeout,
          statusCheckIntervalMs: statusCheckInterval,
          expirationDryRun: opts.expirationDryRun === true,
          inactivity,
        },
      },
    },
  };
}

/** `crownlabs controller`: the in-cluster apply-controller (docs/architecture.md, "The apply-controller"). */
export function registerController(program: Command): void {
  const cmd = addControllerFlags(program.command('controller').description('run the apply-controller: watch CrownLabs resources, server-side apply what compose renders, prune, write status'));
  addConfigOptions(cmd);
  cmd.action(async (opts: Record<string, string | boolean | undefined>) => {
    // Its heap grows by a fixed 20% between full GCs, not up to 4× (./heap-growth.ts).
    applyHeapGrowth(HEAP_GROWING_PERCENT.controller);
    const parsed = controllerRunFromFlags(opts);
    if ('exitCode' in parsed) {
      for (const line of parsed.lines) process.stderr.write(`${line}\n`);
      process.exitCode = parsed.exitCode;
      return;
    }
    const { run } = parsed;
    for (const line of run.warnings) process.stderr.write(`${line}\n`);
    // No kubeconfig, or no API server behind it: one line and exit 1, before any watch starts.
    let kubeConfig: KubeConfig;
    try {
      kubeConfig = loadKubeConfig(run.kubeconfig);
      await checkApiServer(kubeConfig);
    } catch (e) {
      process.stderr.write(`crownlabs controller: ${(e as Error).message.split('\n')[0]}\n`);
      process.exitCode = 1;
      return;
    }
    const log = commandLogger('controller');
    // `[host]:port` without the port.
    if (!run.options.metricsSecure && run.options.metricsAddr && !isLoopbackHost(run.options.metricsAddr.replace(/:[^:\]]*$/, '')))
      log.warn({ metricsAddr: run.options.metricsAddr }, '/metrics is served over plain HTTP to anyone who reaches it (--no-metrics-secure)');
    let webhook = run.webhook;
    if (webhook === 'no-certificate') {
      log.warn({ certDir: DEFAULT_CERT_DIR }, 'no webhook certificate (tls.crt, tls.key): Tenant admission webhooks not served; give --webhook-cert-dir');
      webhook = undefined;
    }
    const webhookFlags = webhook;
    let handle: Awaited<ReturnType<typeof startController>> | undefined;
    // While the CRDs show no single API level, startController waits: a signal then just ends the process.
    const stopWaiting = new AbortController();
    const abortWait = () => stopWaiting.abort();
    process.once('SIGTERM', abortWait);
    process.once('SIGINT', abortWait);
    try {
      handle = await startController({
        ...run.options,
        kubeConfig,
        logger: log,
        onLeadershipLost: () => process.exit(1),
        signal: stopWaiting.signal,
        // docs/behaviour.md §16.2: the CRDs changed level; the controller stopped reconciling, and the
        // Deployment starts it again at the new level.
        onApiLevelChange: () => void handle?.stop().then(() => process.exit(0)),
        // The controller starts the webhooks with its Tenant cache; the server module is wired here.
        webhook: webhookFlags && ((deps) => startWebhookServer({ ...webhookFlags, ...deps })),
      });
    } catch (e) {
      if (stopWaiting.signal.aborted) return;
      // E.g. an unreadable webhook certificate or a port in use: say so (one line) and exit 1, as upstream.
      process.stderr.write(`crownlabs controller: ${(e as Error).message}\n`);
      process.exitCode = 1;
      return;
    }
    process.off('SIGTERM', abortWait);
    process.off('SIGINT', abortWait);
    const started = handle;
    log.info({ metrics: started.metricsAddress, health: started.healthAddress, webhooks: started.webhookAddress, apiLevel: started.apiLevel }, 'controller started');
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        log.info({ signal }, 'shutting down');
        void started.stop().then(resolve);
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
  });
}
