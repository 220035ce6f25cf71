import { existsSync } from 'node:fs';
import path from 'node:path';
import { findHomeDir, type KubeConfig } from '@kubernetes/client-node';
import type { Command } from 'commander';
import { KubeClient } from '../kube/client.ts';
import { close, listen, parseAddr } from '../kube/http-endpoints.ts';
import { listenTls } from '../kube/tls-files.ts';
import { BearerToken, frontEndAuth, isLoopbackHost, NO_AUTH, type FrontEndAuth } from '../user-pods/auth.ts';
import { loadUserPodsConfig, proxyList } from '../user-pods/config.ts';
import { ExecPodFileReader } from '../user-pods/pod-files.ts';
import { userPodsHandler } from '../user-pods/server.ts';
import { UserPodsService } from '../user-pods/service.ts';
import { loadKubeConfig } from './kube.ts';
import { commandLogger } from './log.ts';
import { EXIT_INPUT, EXIT_USAGE } from './report.ts';

/** Environment variable holding the front end's bearer token (instead of --auth-token-file). */
export const USER_PODS_TOKEN_ENV = 'USER_PODS_API_TOKEN';

interface AuthFlags {
  listen: string;
  authTokenFile?: string;
  tlsCertDir?: string;
  clientCa?: string;
  insecureNoAuth?: boolean;
}

/**
 * Who may call the API, from the flags and environment; a string is the usage error. Listening
 * beyond loopback without any check is refused unless `--insecure-no-auth` says so.
 */
export function userPodsAuth(opts: AuthFlags, env: Record<string, string | undefined>): { auth: FrontEndAuth; warning?: string } | string {
  let host: string;
  try {
    host = parseAddr(opts.listen).host;
  } catch (e) {
    return `--listen: ${(e as Error).message}`;
  }
  if (opts.clientCa && !opts.tlsCertDir) return '--client-ca needs --tls-cert-dir (client certificates are checked over HTTPS)';
  const envToken = env[USER_PODS_TOKEN_ENV];
  if (opts.authTokenFile && envToken !== undefined) return `give the token once: --auth-token-file or ${USER_PODS_TOKEN_ENV}, not both`;
  let token: BearerToken | undefined;
  try {
    if (opts.authTokenFile) token = BearerToken.fromFile(opts.authTokenFile);
    else if (envToken !== undefined) token = BearerToken.fromValue(envToken);
  } catch (e) {
    return envToken !== undefined && !opts.authTokenFile ? `${USER_PODS_TOKEN_ENV}: ${(e as Error).message}` : (e as Error).message;
  }
  const auth = frontEndAuth({ token, clientCertificate: Boolean(opts.clientCa) });
  if (opts.insecureNoAuth) {
    if (auth.mechanisms.length) return '--insecure-no-auth contradicts the authentication also given (--auth-token-file, --client-ca or ' + USER_PODS_TOKEN_ENV + ')';
    return { auth: NO_AUTH, warning: 'no authentication (--insecure-no-auth): whoever reaches the port acts for any user' };
  }
  if (!auth.mechanisms.length && !isLoopbackHost(host))
    return `refusing to listen on ${opts.listen} without authentication: anyone reaching the port could list any user's pods with their tokens and delete their storage. Give --auth-token-file (or ${USER_PODS_TOKEN_ENV}) and/or --tls-cert-dir with --client-ca, listen on loopback (--listen 127.0.0.1:8080), or opt out with --insecure-no-auth`;
  return { auth };
}

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
    .option('--listen <addr>', 'listen address (beyond loopback only with authentication or --insecure-no-auth)', ':8080')
    .option('--auth-token-file <file>', `file holding the bearer token the front end must send (re-read when it changes; or the token in ${USER_PODS_TOKEN_ENV})`)
    .option('--tls-cert-dir <dir>', 'serve HTTPS with tls.crt and tls.key from this directory (re-read when they change)')
    .option('--client-ca <file>', 'require a client certificate signed by this CA (PEM; needs --tls-cert-dir)')
    .option('--insecure-no-auth', 'serve without authentication on any address (whoever reaches the port acts for any user)', false)
    .action(async (opts: { config?: string; kubeconfig?: string } & AuthFlags) => {
      const fail = (message: string, code = EXIT_INPUT) => {
        process.stderr.write(`crownlabs user-pods-api: ${message}\n`);
        process.exitCode = code;
      };
      const authOrError = userPodsAuth(opts, process.env);
      if (typeof authOrError === 'string') return fail(authOrError, EXIT_USAGE);
      const { auth, warning } = authOrError;
      const { config, problems } = loadUserPodsConfig({ file: opts.config, env: process.env });
      if (problems.length) {
        for (const p of problems) fail(p);
        return;
      }
      const kubeConfig = kubeConfigOrError(opts.kubeconfig);
      if (typeof kubeConfig === 'string') return fail(kubeConfig);
      const log = commandLogger('user-pods-api');
      if (warning) log.warn(warning);
      const service = new UserPodsService({ client: new KubeClient(kubeConfig), config, files: new ExecPodFileReader(kubeConfig), log });
      try {
        await service.start();
      } catch (e) {
        return fail(`cannot list the user pods in namespace ${config.namespace} on ${kubeConfig.getCurrentCluster()!.server}: ${(e as Error).message.split('\n')[0]}`);
      }
      let server: Awaited<ReturnType<typeof listen>>['server'];
      try {
        const handler = userPodsHandler(service, { testingHost: config.testingHost, trustedProxies: proxyList(config.trustedProxies), log, auth });
        const listening = opts.tlsCertDir ? await listenTls(opts.listen, handler, { certDir: opts.tlsCertDir, clientCaFile: opts.clientCa }, log) : await listen(opts.listen, handler);
        server = listening.server;
        log.info({ address: listening.address, namespace: config.namespace, https: Boolean(opts.tlsCertDir), authentication: auth.mechanisms }, 'user pods API listening');
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
