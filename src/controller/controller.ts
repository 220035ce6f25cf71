/**
 * The apply-controller: informers → Inventory, a work queue keyed by parent, N workers running one
 * reconcile per key (compose only that parent → server-side apply → prune → status), leader
 * election, metrics and health endpoints. `startController` runs it in-process and returns a handle.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { pino, type Logger } from 'pino';
import type { Instance, Tenant, Workspace } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { createKeycloakClient, type KeycloakClient } from '../integrations/keycloak/index.ts';
import { Caches } from './caches.ts';
import { crdsLevelProblem, type ApiLevel, type CrdsLevel } from '../inputs/api-level.ts';
import { cachedLevel, crdInformer, sameDetection } from './api-level-watch.ts';
import type { Informer } from '../kube/informer.ts';
import { childEventRequest } from './child-events.ts';
import type { ControllerContext } from './context.ts';
import { EventRecorder } from './events.ts';
import { AutomationState, type AutomationOptions } from './automation-state.ts';
import { close, healthHandler, listen, metricsHandler } from '../kube/http-endpoints.ts';
import { KubeClient, type RequestRecord } from '../kube/client.ts';
import { LeaderElector } from './leader-election.ts';
import { ControllerMetrics } from './metrics.ts';
import { MetricsAccessReview, secureMetricsHandler } from './metrics-auth.ts';
import { listenTls } from '../kube/tls-files.ts';
import { makeCertificate } from '../kube/self-signed-cert.ts';
import { dispatcher, ReconcilerRegistry } from './reconciler.ts';
import { controllerReconcilers } from './reconcilers.ts';
import { isTerminal } from './terminal-error.ts';
import { WorkQueue } from './work-queue.ts';

/** As controller-runtime without a cert dir: a certificate of its own (Prometheus then skips verification, docs/deploy.md). */
function selfSignedMetricsCertificate() {
  const { cert, key } = makeCertificate({ commonName: 'crownlabs-controller-metrics', hosts: ['localhost', '127.0.0.1'] });
  return { cert, key };
}

export interface ControllerOptions {
  kubeConfig: KubeConfig;
  config: ComposerConfig;
  maxConcurrentReconciles?: number;
  clientQps?: number;
  clientMaxBurst?: number;
  /** `[host]:port`; empty: no server. Defaults `:8080` / `:8081`. */
  metricsAddr?: string;
  /**
   * Serve /metrics over HTTPS behind a TokenReview and a SubjectAccessReview (./metrics-auth.ts),
   * with tls.crt/tls.key from `certDir` or a self-signed certificate. Default: plain HTTP.
   */
  metricsSecure?: { certDir?: string };
  healthProbeAddr?: string;
  enableLeaderElection?: boolean;
  leaderElectionNamespace?: string;
  leaderElectionId?: string;
  tenantNsKeepAliveMs?: number;
  /**
   * Each Instance is reconciled again this long after its last successful reconcile, stretched by
   * a random 0–10% (0: never). Default 10h, as controller-runtime's jittered informer resync.
   */
  resyncPeriodMs?: number;
  /**
   * Tenants and Workspaces are requeued after a success at a uniform random time in [min, max)
   * (upstream `--tenant-operator-rq-time-min/max`, docs/behaviour.md §5: default 4h–8h).
   */
  requeueMinMs?: number;
  requeueMaxMs?: number;
  logger?: Logger;
  keycloak?: KeycloakClient;
  onRequest?: (r: RequestRecord) => void;
  /** Called with the status of every answer of the API server (tests count 403s). */
  onResponse?: (r: RequestRecord & { code: number }) => void;
  /** Called after every reconcile with its key and outcome (tests, tracing); `statusOnly`: the Instance status-only path. */
  onReconcile?: (key: string, outcome: 'success' | 'error', statusOnly: boolean) => void;
  now?: () => number;
  /** Instance automation (docs/behaviour.md §8); every part is off unless enabled. */
  automation?: AutomationOptions;
  /**
   * Called when the CRDs change to another API level, or to none, after the controller stopped
   * reconciling (the CLI exits, for the Deployment to start it again). Default: the handle stops.
   */
  onApiLevelChange?: (detected: CrdsLevel) => void;
  /** Gives up waiting for the CRDs to show one API level: `startController` then throws. */
  signal?: AbortSignal;
  /** Called when leadership is lost (the CLI exits). */
  onLeadershipLost?: () => void;
  /**
   * Starts the Tenant admission webhooks (docs/behaviour.md §6), which run on every replica, leader or
   * not, with what they need of this controller. The caller (the CLI) wires the webhook server in,
   * so the controller does not import another feature.
   */
  webhook?: (deps: WebhookDeps) => Promise<BesideServer>;
}

/** What the webhooks take from the controller: its shard settings, the requester's Tenant, clock, logger. */
export interface WebhookDeps {
  targetLabel: ComposerConfig['targetLabel'];
  baseWorkspaces: ComposerConfig['baseWorkspaces'];
  getTenant(name: string): Promise<Tenant>;
  /** e62be9e's rules read Workspaces (self-enrolment) and a namespace's Instances (personal workspace). */
  getWorkspace(name: string): Promise<Workspace>;
  listInstances(namespace: string): Promise<Instance[]>;
  /** The level of the Tenants admitted (docs/behaviour.md §16.4); default 2e8aeb9. */
  level?: ApiLevel;
  /** The controller's own user name: its writes to its Tenants (finalizers, labels) skip the checks. */
  bypassUsers: string[];
  /** e62be9e's Instance quota webhook (docs/behaviour.md §16.6): its reads, its ledger's namespace (the Lease's), the caps of the managed quota. */
  client: KubeClient;
  quotaLedgerNamespace: string;
  quotaCaps: Pick<ComposerConfig, 'capCpu' | 'capMemory' | 'capInstances'>;
  now: () => number;
  logger: Logger;
}

/** A server started beside the controller and closed with it. */
export interface BesideServer {
  readonly address?: string;
  close(): Promise<void>;
}

export interface ControllerHandle {
  readonly caches: Caches;
  /** The API level of the cluster's CRDs, which this controller reads and writes (docs/behaviour.md §16.2). */
  readonly apiLevel: ApiLevel;
  readonly queue: WorkQueue;
  readonly metrics: ControllerMetrics;
  readonly client: KubeClient;
  readonly metricsAddress?: string;
  readonly healthAddress?: string;
  readonly webhookAddress?: string;
  /** Resolves when the queue is empty and no reconcile runs (after at least `settleMs` of quiet). */
  idle(settleMs?: number): Promise<void>;
  /** Enqueues every parent (a full resync). */
  resyncAll(): void;
  stop(): Promise<void>;
}

export const DEFAULT_KEEP_ALIVE_MS = 10 * 3600_000;

export async function startController(options: ControllerOptions): Promise<ControllerHandle> {
  const log = options.logger ?? pino({ name: 'crownlabs-controller' });
  const metrics = new ControllerMetrics(!options.logger);
  const client = new KubeClient(options.kubeConfig, {
    qps: options.clientQps ?? 100,
    burst: options.clientMaxBurst ?? 100,
    onRequest: options.onRequest,
    onResponse: options.onResponse,
    onThrottled: (r) => {
      metrics.throttled.inc();
      log.debug({ method: r.method, path: r.path, delayMs: r.delayMs }, 'throttled by the API server, retrying');
    },
  });
  let ready = false;
  let health: Awaited<ReturnType<typeof listen>> | undefined;
  let metricsServer: Awaited<ReturnType<typeof listen>> | undefined;
  const healthAddr = options.healthProbeAddr ?? ':8081';
  const metricsAddr = options.metricsAddr ?? ':8080';
  if (healthAddr) health = await listen(healthAddr, healthHandler(() => ready));
  if (metricsAddr && options.metricsSecure) {
    const { certDir } = options.metricsSecure;
    const handler = secureMetricsHandler(metrics.registry, new MetricsAccessReview(client), log.child({ component: 'metrics' }));
    try {
      metricsServer = await listenTls(metricsAddr, handler, certDir ? { certDir } : selfSignedMetricsCertificate, log);
    } catch (e) {
      await close(health?.server);
      throw new Error(`metrics server: ${(e as Error).message}`);
    }
  } else if (metricsAddr) metricsServer = await listen(metricsAddr, metricsHandler(metrics.registry));

  let webhooks: BesideServer | undefined;
  const closeServers = () => Promise.all([close(health?.server), close(metricsServer?.server), webhooks?.close()]);

  // docs/behaviour.md §16.2: the level of the installed CRDs, waited for while they give none.
  const crds = crdInformer(client, (err) => log.warn({ kind: 'CustomResourceDefinition', err: err.message }, 'informer error'));
  crds.start();
  let level: ApiLevel;
  try {
    level = await waitForLevel(crds, log, metrics, options.signal);
  } catch (e) {
    crds.stop();
    await closeServers();
    throw e;
  }

  // After the level: the webhooks' rules are that level's (docs/behaviour.md §16.4). Until the
  // caches exist (a standby never builds them) they GET what they read (requesterTenant).
  let caches: Caches | undefined;
  if (options.webhook) {
    try {
      webhooks = await options.webhook({
        targetLabel: options.config.targetLabel,
        baseWorkspaces: options.config.baseWorkspaces,
        getTenant: (name) => requesterTenant(client, caches, name),
        getWorkspace: (name) => cachedOrGet<Workspace>(client, caches?.workspaces, 'crownlabs.polito.it/v1alpha1', 'Workspace', name),
        listInstances: async (ns) => (caches?.instances.hasSynced ? caches.instances.list().filter((i) => i.metadata.namespace === ns) : (await client.request<{ items: Instance[] }>('GET', client.path('crownlabs.polito.it/v1alpha2', 'Instance', ns))).items) as unknown as Instance[],
        level,
        bypassUsers: await ownUserNames(client, log),
        client,
        quotaLedgerNamespace: options.leaderElectionNamespace ?? 'default',
        quotaCaps: options.config,
        now: options.now ?? Date.now,
        logger: log.child({ component: 'webhooks' }),
      });
    } catch (e) {
      crds.stop();
      await closeServers();
      throw new Error(`webhook server: ${(e as Error).message}`);
    }
  }

  caches = new Caches(client, {
    onError: (kind, err) => log.warn({ kind, err: err.message }, 'informer error'),
    onList: (kind, reason) => {
      metrics.relists.inc({ kind, reason });
      if (reason !== 'initial') log.info({ kind, reason }, 're-listed');
    },
    onInvalid: (obj, problems) => log.warn({ object: `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, problems: problems.map((p) => `${p.field}: ${p.message}`) }, 'invalid object ignored'),
    childGuard: options.config,
    level,
  });
  const liveCaches = caches;
  const keycloak =
    options.keycloak ??
    createKeycloakClient({
      url: options.config.keycloakUrl,
      loginRealm: options.config.keycloakLoginRealm,
      targetRealm: options.config.keycloakTargetRealm,
      targetClientId: options.config.keycloakTargetClient,
      username: options.config.keycloakUser,
      password: options.config.keycloakPassword,
    });
  // Keep the admin token fresh (docs/behaviour.md §2.1: checked every 2 minutes) while we run.
  const stopTokenUpkeep = keycloak && !options.keycloak ? keycloak.startTokenUpkeep() : undefined;
  const ctx: ControllerContext = {
    client,
    caches,
    config: options.config,
    log,
    metrics,
    events: new EventRecorder(client),
    keycloak,
    tenantNsKeepAliveMs: options.tenantNsKeepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    now: options.now ?? Date.now,
  };
  const queue = new WorkQueue({ workers: Math.max(1, options.maxConcurrentReconciles ?? 1) });
  const enqueue = (key: string) => {
    queue.add(key);
    metrics.queueDepth.set(queue.depth);
  };
  ctx.enqueue = enqueue;

  const periodic = { resyncPeriodMs: options.resyncPeriodMs ?? 10 * 3600_000, requeueMinMs: options.requeueMinMs ?? 4 * 3600_000, requeueMaxMs: options.requeueMaxMs ?? 8 * 3600_000 };
  const registry = new ReconcilerRegistry(controllerReconcilers(periodic, new AutomationState(options.automation ?? {})));

  // Watch wiring, declared next to each reconciler; children map to their parent by label.
  registry.watch({ ctx, caches, enqueue, cancel: (key) => queue.cancelAfter(key) });
  const childScope = { guard: options.config, parentExists: (key: string) => liveCaches.parentOf(key) !== undefined };
  for (const inf of new Set(caches.children.values())) {
    inf.on((type, obj, old, own) => {
      const req = childEventRequest(type, obj, old, own, childScope);
      if (!req) return;
      if (!req.light) return enqueue(req.key);
      queue.addLight(req.key);
      metrics.queueDepth.set(queue.depth);
    });
  }

  let elector: LeaderElector | undefined;
  if (options.enableLeaderElection) {
    elector = new LeaderElector(client, {
      namespace: options.leaderElectionNamespace ?? 'default',
      name: options.leaderElectionId ?? 'crownlabs-composer.crownlabs.polito.it',
      onLost: () => {
        log.error('leadership lost');
        options.onLeadershipLost?.();
      },
    });
    log.info({ identity: elector.identity }, 'waiting for leadership');
    await elector.acquire();
    log.info({ identity: elector.identity }, 'leader');
  }

  caches.start();
  await caches.synced();
  ready = true;
  log.info({ informers: caches.all.length, apiLevel: level }, 'caches synced');

  const reconcile = dispatcher(registry, ctx, { onReconcile: options.onReconcile, queueDepth: () => queue.depth });
  queue.run(reconcile, (key, err) =>
    isTerminal(err) ? log.warn({ key, err: err.message }, 'reconcile failed, not retried until the object changes') : log.warn({ key, err: (err as Error).message }, 'reconcile failed'),
  );

  const resyncAll = () => {
    for (const key of registry.keys(liveCaches)) enqueue(key);
  };

  let stopped = false;
  const handle: ControllerHandle = {
    caches: liveCaches,
    apiLevel: level,
    queue,
    metrics,
    client,
    metricsAddress: metricsServer?.address,
    healthAddress: health?.address,
    webhookAddress: webhooks?.address,
    async idle(settleMs = 300) {
      for (;;) {
        await queue.idle();
        await new Promise((r) => setTimeout(r, settleMs));
        if (queue.isIdle()) return;
      }
    },
    resyncAll,
    async stop() {
      if (stopped) return;
      stopped = true;
      ready = false;
      crds.stop();
      liveCaches.stop();
      stopTokenUpkeep?.();
      await queue.stop();
      await elector?.release();
      await closeServers();
      log.info('stopped');
    },
  };
  // A CRD change that gives another level, or none: stop reconciling, for a start at the new level.
  let running = cachedLevel(crds);
  crds.on(() => {
    const now = cachedLevel(crds);
    if (stopped || sameDetection(now, running)) return;
    running = now;
    if (now.kind === 'level' && now.level === level) return;
    ready = false;
    metrics.setApiLevel(now.kind === 'level' ? now.level : undefined);
    log.error({ apiLevel: level, crds: now.crds.map((c) => `${c.crd}=${c.level}`) }, `${crdsLevelProblem(now) ?? `the installed CrownLabs CRDs are now at API level ${now.kind === 'level' ? now.level : ''}`}; this controller runs at ${level}: stopping, to start again at the CRDs' level`);
    if (options.onApiLevelChange) options.onApiLevelChange(now);
    else void handle.stop();
  });
  return handle;
}

/**
 * Resolves with the level the CRDs show; while they show none (mixed, missing), says why once per
 * change and waits for a CRD event. `signal` gives up waiting (the caller stops).
 */
async function waitForLevel(crds: Informer, log: Logger, metrics: ControllerMetrics, signal?: AbortSignal): Promise<ApiLevel> {
  let wake: (() => void) | undefined;
  crds.on(() => wake?.());
  const stopped = () => new Error('stopped while waiting for the CRDs to show one API level');
  await Promise.race([crds.synced, new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(stopped()), { once: true }))]);
  let last: CrdsLevel | undefined;
  for (;;) {
    const now = cachedLevel(crds);
    if (now.kind === 'level') {
      wake = undefined;
      metrics.setApiLevel(now.level);
      log.info({ apiLevel: now.level }, `the installed CrownLabs CRDs are at API level ${now.level}`);
      return now.level;
    }
    if (!last || !sameDetection(now, last)) {
      metrics.setApiLevel(undefined);
      log.error({ crds: now.crds.map((c) => `${c.crd}=${c.level}`) }, `${crdsLevelProblem(now)}: not reconciling until they agree`);
      last = now;
    }
    await new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(stopped());
      wake = resolve;
      signal?.addEventListener('abort', () => reject(stopped()), { once: true });
    });
  }
}

/**
 * A Tenant for the validating webhook: from the informer when it is synced and holds it (the
 * leader), else a GET (a standby replica has no caches; a Tenant created a moment ago may not be
 * cached yet).
 */
/**
 * Who the API server takes this controller for (a SelfSubjectReview, which every authenticated user
 * may create), so that the webhooks never refuse the controller's own Tenant writes whatever
 * groups the installation bypasses. Empty, with a warning, when the server cannot say.
 */
export async function ownUserNames(client: KubeClient, log: Logger): Promise<string[]> {
  try {
    const review = await client.request<{ status?: { userInfo?: { username?: string } } }>('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    const username = review.status?.userInfo?.username;
    if (username) return [username];
  } catch (e) {
    log.warn({ err: (e as Error).message }, 'could not learn the controller\'s own user name: its Tenant writes go through the webhook checks');
  }
  return [];
}

/** An object from the controller's cache when synced, else from a GET. */
async function cachedOrGet<T>(client: KubeClient, inf: Caches['workspaces'] | undefined, apiVersion: string, kind: string, name: string): Promise<T> {
  const cached = inf?.hasSynced ? inf.get(undefined, name) : undefined;
  if (cached) return cached as unknown as T;
  return client.request<T>('GET', client.path(apiVersion, kind, undefined, name));
}

export async function requesterTenant(client: KubeClient, caches: Caches | undefined, name: string): Promise<Tenant> {
  if (!name) throw new Error('the request has no user name');
  const cached = caches?.tenants.hasSynced ? caches.tenants.get(undefined, name) : undefined;
  if (cached) return cached as unknown as Tenant;
  return client.request<Tenant>('GET', client.path('crownlabs.polito.it/v1alpha2', 'Tenant', undefined, name));
}
