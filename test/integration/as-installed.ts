// The controller as docs/deploy.md installs it: `crownlabs manifests` rendered for the test's shard
// and applied (ServiceAccount, derived RBAC, ConfigMap, policies, webhook configurations), then the
// rendered Deployment's container run in this process the way a kubelet would run it:
// - identity: a token of the rendered ServiceAccount (TokenRequest), nothing else;
// - arguments: the container's args, parsed by the CLI's own flag parser; the paths under its
//   volume mounts point at a folder where the ConfigMap and Secret volumes are written from the
//   API server, as the kubelet projects them;
// - environment: the container's env, secretKeyRefs read from the rendered Secret names;
// - webhooks: the rendered configurations, with two changes a test on a shared cluster needs. The
//   API server cannot reach a Service here (no Endpoints can name 127.0.0.1), so each
//   `clientConfig.service` becomes a `url` to the controller's webhook port on 127.0.0.1 (path kept,
//   the CA bundle the install renders kept); and a matchCondition narrows the Tenant hooks to this
//   run's Tenants, since they fail closed and other files write Tenants too (the Instance hook
//   already selects the namespaces of the run's shard).
// - replicas (option): several controllers so started, the webhook port a round-robin TCP proxy in
//   front of theirs, as a Service spreads connections over a Deployment's pods.
// What differs from a pod: the bind addresses (127.0.0.1 and free ports, not the pod's :8080/:8081/
// :9443), and the process is this one (so tests can wait for the work queue).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { Command } from 'commander';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { addControllerFlags, controllerRunFromFlags } from '../../src/cli/controller.ts';
import { addConfigOptions } from '../../src/cli/options.ts';
import type { ComposerConfig } from '../../src/config/config.ts';
import { startController } from '../../src/controller/controller.ts';
import type { RequestRecord } from '../../src/kube/client.ts';
import { PLATFORM_SECRET, renderPlatform } from '../../src/platform/install.ts';
import { startWebhookServer } from '../../src/webhooks/server.ts';
import { WEBHOOK_TLS_SECRET } from '../../constructs/platform/controller-shard.ts';
import { freePort } from '../support/free-port.ts';
import { makeServingCert } from '../support/tls.ts';
import { adminKubeConfig, deleteAll, deleteInstall, rest, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { countedWrites, type RunningController } from './controller-support.ts';

/** The install namespace docs/deploy.md uses (`platformNamespace`'s default). */
export const INSTALL_NAMESPACE = 'crownlabs-composer';
const WEBHOOK_KINDS = new Set(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']);

export interface InstalledOptions {
  /**
   * CEL over the admitted object: which Tenants this run's webhooks see.
   * @default the Tenants whose name starts with the shard (the target label's value)
   */
  webhookScope?: string;
  /** Values of the rendered Secret `crownlabs-composer-secrets` @default the config's secret keys */
  secrets?: Record<string, string>;
  /** Flags an operator appends to the rendered container's args (e.g. more reconcile workers). */
  extraArgs?: readonly string[];
  /**
   * Controller replicas, each serving the webhooks (the first started leads), the API server's
   * webhook calls spread over them by connection, as a Service spreads them over pods.
   * @default 1
   */
  replicas?: number;
}

export interface InstalledController extends RunningController {
  /** The user name the controller's token authenticates as. */
  readonly userName: string;
  /** The rendered container args it was started with. */
  readonly args: readonly string[];
  /** Every object of the install that was applied. */
  readonly install: KubeObject[];
  /** The webhook configurations as applied (clientConfig and matchConditions changed, see above). */
  readonly webhookConfigurations: KubeObject[];
  /** The base URL the API server calls the webhooks at. */
  readonly webhookUrl: string;
  /** The controller's token as a kubeconfig. */
  readonly kubeConfig: KubeConfig;
  /** Removes the webhook configurations first (they fail closed), then stops the controller. */
  stop(): Promise<void>;
}

type Container = { args: string[]; env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } } }[]; volumeMounts?: { name: string; mountPath: string }[] };
type Volume = { name: string; configMap?: { name: string }; secret?: { secretName: string }; emptyDir?: object };

/** Starts the controller of `config`'s shard as installed; see the file comment for what is faithful and what is not. */
export async function runInstalledController(config: ComposerConfig, options: InstalledOptions = {}): Promise<InstalledController> {
  const shard = config.targetLabel.value;
  const ns = INSTALL_NAMESPACE;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'installed-'));
  const { caPem, certPem, keyPem } = await makeServingCert(path.join(tmp, 'ca'));
  const install = renderPlatform({
    ...config,
    platformNamespace: ns,
    platformShards: [shard],
    platformInstallCrds: false,
    platformWebhookCaBundle: Buffer.from(caPem).toString('base64'),
    platformWebhookCertificate: '',
  }) as KubeObject[];
  const deployment = install.find((o) => o.kind === 'Deployment' && o.metadata.name === `crownlabs-controller-${shard}`) as KubeObject & { spec: { template: { spec: { containers: Container[]; volumes: Volume[]; serviceAccountName: string } } } };
  if (!deployment) throw new Error(`the install renders no controller Deployment for shard ${shard}`);
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  // No kubelet runs the install's workloads: this process is the controller's.
  const applied = install.filter((o) => !WEBHOOK_KINDS.has(o.kind) && !['Deployment', 'DaemonSet', 'StatefulSet'].includes(o.kind));
  await serverSideApply(applied);

  // The Secrets an operator creates beside the install (docs/deploy.md): the controller's and the webhooks' serving pair.
  const secrets = options.secrets ?? Object.fromEntries(Object.entries({ keycloakPassword: config.keycloakPassword, oidcClientSecret: config.oidcClientSecret, cookieSecretSeed: config.cookieSecretSeed }).filter(([, v]) => v));
  await serverSideApply([
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: PLATFORM_SECRET, namespace: ns }, type: 'Opaque', stringData: secrets },
    { apiVersion: 'v1', kind: 'Secret', metadata: { name: WEBHOOK_TLS_SECRET, namespace: ns }, type: 'kubernetes.io/tls', stringData: { 'tls.crt': certPem, 'tls.key': keyPem } },
  ] as KubeObject[]);

  const admin = rest();
  // The API server's RBAC cache lags behind a Role just applied; a kubelet would start the pod later anyway.
  const leaseId = container.args[container.args.indexOf('--leader-election-id') + 1];
  const user = `system:serviceaccount:${ns}:${pod.serviceAccountName}`;
  await waitFor(async () => {
    const review = await admin.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`], resourceAttributes: { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: ns, name: leaseId } } },
    });
    return review.status?.allowed === true;
  }, { timeoutMs: 30_000, message: 'the rendered lease Role in force' });
  const token = await admin.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${pod.serviceAccountName}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const kubeConfig = tokenKubeConfig(token.status.token);

  // The kubelet's part: project the volumes under a root of our own and resolve the environment.
  const root = path.join(tmp, 'root');
  for (const mount of container.volumeMounts ?? []) {
    const volume = pod.volumes.find((v) => v.name === mount.name)!;
    const dir = path.join(root, mount.mountPath);
    await mkdir(dir, { recursive: true });
    const data = await volumeData(volume, ns);
    for (const [key, value] of Object.entries(data)) await writeFile(path.join(dir, key), value);
  }
  const env: NodeJS.ProcessEnv = {};
  for (const e of container.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const value = (await secretData(ref.name, ns))[ref.key];
      if (value !== undefined) env[e.name] = value;
      else if (!ref.optional) throw new Error(`env ${e.name}: Secret ${ns}/${ref.name} has no key ${ref.key}`);
    }
  }

  const replicas = options.replicas ?? 1;
  const webhookPort = await freePort();
  const requests: RequestRecord[] = [];
  const reconciled: string[] = [];
  // Each replica as the kubelet would run the container, on its own webhook port.
  const startReplica = async (port: number) => {
    const mounts = (container.volumeMounts ?? []).map((m) => m.mountPath);
    const args = [...container.args, ...(options.extraArgs ?? [])].map((a) => (mounts.some((m) => a === m || a.startsWith(`${m}/`)) ? path.join(root, a) : a));
    const at = (flag: string) => args.indexOf(flag) + 1;
    for (const flag of ['--metrics-addr', '--health-probe-addr']) if (at(flag) > 0) args[at(flag)] = '127.0.0.1:0';
    args.push('--webhook-host', '127.0.0.1', '--webhook-port', String(port));

    const cmd = addConfigOptions(addControllerFlags(new Command('controller')));
    cmd.exitOverride();
    if (args[0] !== 'controller') throw new Error(`the controller container's args start with ${args[0]}, not the controller command`);
    cmd.parse(args.slice(1), { from: 'user' });
    const parsed = controllerRunFromFlags(cmd.opts(), env);
    if ('exitCode' in parsed) throw new Error(`the rendered controller would exit ${parsed.exitCode}: ${parsed.lines.join('; ')}`);
    const { run } = parsed;
    const webhook = run.webhook === 'no-certificate' ? undefined : run.webhook;
    if (!webhook) throw new Error('the rendered controller serves no webhooks');
    return startController({
      ...run.options,
      kubeConfig,
      logger: pino({ level: process.env.CONTROLLER_LOG ?? 'silent' }),
      onRequest: (r) => requests.push(r),
      onReconcile: (key) => reconciled.push(key),
      webhook: (deps) => startWebhookServer({ ...webhook, ...deps }),
    });
  };
  // One replica listens on the webhook port itself; several sit behind a round-robin TCP proxy there, as behind a Service.
  const replicaPorts = replicas === 1 ? [webhookPort] : await Promise.all(Array.from({ length: replicas }, () => freePort()));
  const handle = await startReplica(replicaPorts[0]);
  // A standby waits for the Lease inside startController, its webhook server already listening;
  // it takes over, and is then stopped, when the leader releases the Lease in stop().
  const standbys = replicaPorts.slice(1).map((port) => startReplica(port));
  const stopStandbys = () => Promise.all(standbys.map((s) => s.then((h) => h.stop(), () => undefined)));
  let proxy: RoundRobinProxy | undefined;
  try {
    await Promise.all(replicaPorts.slice(1).map((port) => waitFor(() => accepts(port), { timeoutMs: 60_000, message: `the standby's webhook server on ${port}` })));
    if (replicas > 1) proxy = await roundRobinProxy(webhookPort, replicaPorts);
  } catch (e) {
    await handle.stop();
    await stopStandbys();
    throw e;
  }

  const webhookUrl = `https://127.0.0.1:${webhookPort}`;
  const scope = options.webhookScope ?? `object.metadata.name.startsWith(${JSON.stringify(shard)})`;
  const webhookConfigurations = install
    .filter((o) => WEBHOOK_KINDS.has(o.kind))
    .map((o) => ({
      ...o,
      webhooks: (o.webhooks as { rules: { resources: string[] }[]; clientConfig: { service?: { path: string }; caBundle?: string } }[]).map((w) => ({
        ...w,
        clientConfig: { url: `${webhookUrl}${w.clientConfig.service!.path}`, caBundle: w.clientConfig.caBundle },
        // The Instance hook selects the shard's namespaces already.
        ...(w.rules.some((r) => r.resources.includes('tenants')) ? { matchConditions: [{ name: 'this-test-run', expression: scope }] } : {}),
      })),
    })) as KubeObject[];
  const selfReview = await rest(kubeConfig).request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } });
  const stop = async () => {
    try {
      await deleteAll(webhookConfigurations);
    } finally {
      await proxy?.close();
      await handle.stop();
      await stopStandbys();
      await rm(tmp, { recursive: true, force: true });
    }
  };
  try {
    await serverSideApply(webhookConfigurations);
    // The API server picks webhook configurations up asynchronously: wait until a dry-run create is mutated.
    const probe = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: `${shard}-probe` }, spec: { firstName: 'P', lastName: 'P', email: 'p@example.org' } };
    await waitFor(async () => {
      const r = await admin.request('POST', '/apis/crownlabs.polito.it/v1alpha2/tenants?dryRun=All', { body: probe }).catch(() => undefined);
      return r?.metadata?.labels?.[config.targetLabel.key] === shard;
    }, { timeoutMs: 30_000, message: 'the installed webhooks are called' });
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    handle,
    requests,
    reconciled,
    writes: () => countedWrites(requests),
    userName: selfReview.status.userInfo.username,
    args: container.args,
    install: applied,
    webhookConfigurations,
    webhookUrl,
    kubeConfig,
    stop,
  };
}

/** Deletes the cluster-scoped objects of the install (the namespaced ones are left for the next file, as a reinstall would). */
export async function removeInstall(ctl: InstalledController | undefined): Promise<void> {
  if (ctl) await deleteInstall(ctl.install);
}

/** Whether something listens on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

interface RoundRobinProxy {
  close(): Promise<void>;
}

/** A TCP proxy on `port` that sends each connection to the next of `targets` (TLS passes through). */
async function roundRobinProxy(port: number, targets: number[]): Promise<RoundRobinProxy> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targets[next++ % targets.length], '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => [client, upstream].forEach((x) => x.destroy()));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', () => resolve()));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

function tokenKubeConfig(token: string): KubeConfig {
  const cluster = adminKubeConfig().getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'test', server: cluster.server, caData: cluster.caData, caFile: cluster.caFile, skipTLSVerify: false }],
    users: [{ name: 'controller', token }],
    contexts: [{ name: 'controller', cluster: 'test', user: 'controller' }],
    currentContext: 'controller',
  });
  return kc;
}

async function secretData(name: string, ns: string): Promise<Record<string, string>> {
  const s = await rest().request('GET', `/api/v1/namespaces/${ns}/secrets/${name}`).catch(() => undefined);
  return Object.fromEntries(Object.entries((s?.data ?? {}) as Record<string, string>).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

async function volumeData(volume: Volume, ns: string): Promise<Record<string, string>> {
  if (volume.configMap) return (await rest().request('GET', `/api/v1/namespaces/${ns}/configmaps/${volume.configMap.name}`)).data ?? {};
  if (volume.secret) return secretData(volume.secret.secretName, ns);
  return {};
}
