/**
 * A small Kubernetes REST client for the controller: one keep-alive HTTPS agent, token-bucket rate
 * limits per resource type (`--client-qps`, `--client-max-burst`), JSON requests, streaming
 * watches, and a request hook that tests use to count writes. Objects go on the wire exactly as
 * rendered (no generated models).
 */
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KIND_RESOURCES, type KindResource } from './resources.ts';

/** Our field manager: the controller's applies and the user pods API's are the same owner. */
export const FIELD_MANAGER = 'crownlabs-composer';

/** Verbs that write an object: each carries `fieldManager` (ours unless the caller names one), else managedFields say `unknown`. */
const WRITES = new Set(['POST', 'PUT', 'PATCH']);

export class KubeApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: unknown,
    readonly method: string,
    readonly path: string,
    /** The server's `Retry-After` (429 Too Many Requests, some 5xx), in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(`${method} ${path} -> ${code}: ${(body as { message?: string } | undefined)?.message ?? JSON.stringify(body)}`);
    this.name = 'KubeApiError';
  }
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface RequestRecord {
  method: string;
  path: string;
}

export interface KubeClientOptions {
  /** Requests a second and burst, per resource type (`rateLimitKey`); qps ≤ 0: no limit. */
  qps?: number;
  burst?: number;
  /** Called before every request, once it passed the rate limit (not for watches); tests count writes with it. */
  onRequest?: (r: RequestRecord) => void;
  /** Called with the HTTP status of every answer, watches included (tests count 403s with it). */
  onResponse?: (r: RequestRecord & { code: number }) => void;
  /** Called when the server throttles a request (429) and it is retried after `delayMs`. */
  onThrottled?: (r: RequestRecord & { delayMs: number }) => void;
  /** Retries of a throttled request before the error reaches the caller (as client-go: 10). */
  maxThrottleRetries?: number;
}

/** `Retry-After` in milliseconds (seconds or an HTTP date), capped; undefined when absent or bad. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const ms = /^\d+$/.test(v.trim()) ? Number(v) * 1000 : Date.parse(v) - now;
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), 60_000) : undefined;
}

/** `ms` stretched by a random 0–`fraction` share, so many waiters don't wake in lockstep. */
export function jitter(ms: number, fraction = 0.2, random = Math.random): number {
  return Math.round(ms * (1 + fraction * random()));
}

/** A token bucket: `qps` tokens a second, at most `burst` saved up. */
export class TokenBucket {
  private tokens: number;
  private last = Date.now();
  private waiting: (() => void)[] = [];
  private timer?: NodeJS.Timeout;
  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {
    this.tokens = burst;
  }
  take(): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    this.refill();
    if (this.waiting.length === 0 && this.tokens >= 1) {
      this.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }
  private refill() {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
  }
  private schedule() {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refill();
      while (this.waiting.length > 0 && this.tokens >= 1) {
        this.tokens -= 1;
        this.waiting.shift()!();
      }
      if (this.waiting.length > 0) this.schedule();
    }, Math.max(1, Math.ceil(1000 / this.qps)));
  }
}

/** Subresources of a Namespace (`/api/v1/namespaces/<name>/status`), as the API server parses paths. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/**
 * The rate-limit bucket of a request: its group/version/resource (subresources share their
 * resource's), and lists (a collection GET: the informers) a bucket of their own. That is how the
 * Go operators are limited: controller-runtime builds one REST client, with its own token bucket
 * at the configured QPS and burst, per resource type, and its cache lists through clients of its
 * own. A path outside `/api` and `/apis` is its own bucket.
 */
export function rateLimitKey(method: string, path: string): string {
  const segs = path.split('?')[0].split('/').filter(Boolean);
  let gv: string;
  let rest: string[];
  if (segs[0] === 'api' && segs.length >= 2) [gv, rest] = [segs[1], segs.slice(2)];
  else if (segs[0] === 'apis' && segs.length >= 3) [gv, rest] = [`${segs[1]}/${segs[2]}`, segs.slice(3)];
  else return `/${segs.join('/')}`;
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  return `${gv}/${rest[0] ?? ''}${method === 'GET' && rest.length === 1 ? ' (list)' : ''}`;
}

/** One token bucket per `rateLimitKey`, each at `qps` and `burst` (qps ≤ 0: no limit). Watches take none, as in client-go. */
export class ResourceRateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  constructor(
    private readonly qps: number,
    private readonly burst: number,
  ) {}
  take(method: string, path: string): Promise<void> {
    if (this.qps <= 0) return Promise.resolve();
    const key = rateLimitKey(method, path);
    let bucket = this.buckets.get(key);
    if (!bucket) this.buckets.set(key, (bucket = new TokenBucket(this.qps, this.burst)));
    return bucket.take();
  }
}

export interface WatchHandle {
  stop(): void;
}

/** https.Agent with the fields Node keeps but its typings leave out. */
type NodeAgent = https.Agent & { options: https.AgentOptions; keepAlive: boolean };

/** The agent options that make a TLS connection what it is (a change means new connections). */
const TLS_OPTIONS = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername'] as const;

export class KubeClient {
  readonly server: string;
  private credentials?: { at: number; promise: Promise<https.RequestOptions> };
  private agent?: NodeAgent;
  private readonly limiter: ResourceRateLimiter;

  constructor(
    readonly kubeConfig: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    const server = kubeConfig.getCurrentCluster()?.server;
    if (!server) throw new Error('kubeconfig has no current cluster');
    this.server = server;
    this.limiter = new ResourceRateLimiter(options.qps ?? 100, Math.max(1, options.burst ?? 100));
  }

  /**
   * TLS material and credentials, re-read every minute: an in-cluster ServiceAccount token is a
   * file the kubelet rotates, and exec/OIDC credentials expire.
   */
  private get agentOptions(): Promise<https.RequestOptions> {
    const now = Date.now();
    if (!this.credentials || now - this.credentials.at > 60_000) {
      const promise = (async () => {
        const o: https.RequestOptions = { headers: {} };
        await this.kubeConfig.applyToHTTPSOptions(o);
        o.agent = this.keepAliveAgent(o.agent);
        return o;
      })();
      this.credentials = { at: now, promise };
      promise.catch(() => (this.credentials = undefined));
    }
    return this.credentials.promise;
  }

  /**
   * The kubeconfig's agent made keep-alive, and kept while its TLS material is the same. client-node
   * hands out a new agent without keep-alive at every call: each request then opened its own TLS
   * connection (a handshake, a secure context parsed from the CA and client certificate), which cost
   * the API server and this process time and left native memory fragmented (bench/RESULTS.md).
   * A proxy agent from the kubeconfig is used as it is.
   */
  private keepAliveAgent(agent: https.RequestOptions['agent']): https.RequestOptions['agent'] {
    if (this.kubeConfig.getCurrentCluster()?.proxyUrl || !(agent instanceof https.Agent) || agent.constructor !== https.Agent) return agent;
    const tls = (agent as NodeAgent).options;
    const same = (a: unknown, b: unknown) => a === b || (a != null && b != null && String(a) === String(b));
    const prev = this.agent;
    if (prev && TLS_OPTIONS.every((k) => same(prev.options[k], tls[k]))) return prev;
    if (prev) {
      // Requests in flight (watches too) finish on their connections, which then close.
      prev.keepAlive = false;
      for (const sockets of Object.values(prev.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
    }
    this.agent = new https.Agent({ ...tls, keepAlive: true }) as NodeAgent;
    return this.agent;
  }

  resource(apiVersion: string, kind: string): KindResource {
    const r = KIND_RESOURCES[`${apiVersion}/${kind}`];
    if (!r) throw new Error(`unknown kind ${apiVersion} ${kind}: add it to src/kube/resources.ts`);
    return r;
  }

  /** REST path of an object, or of a collection when `name` is omitted (`namespace` undefined: all namespaces). */
  path(apiVersion: string, kind: string, namespace?: string, name?: string, sub?: string): string {
    const r = this.resource(apiVersion, kind);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
    return `${base}${ns}/${r.plural}${name ? `/${encodeURIComponent(name)}` : ''}${sub ? `/${sub}` : ''}`;
  }

  /**
   * One request; a 429 (or a 5xx carrying `Retry-After`) is retried after the server's
   * `Retry-After` (1 s if absent), jittered, up to `maxThrottleRetries` times, as client-go does.
   */
  async request<T = any>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const retries = this.options.maxThrottleRetries ?? 10;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.requestOnce<T>(method, path, opts);
      } catch (e) {
        const throttled = e instanceof KubeApiError && (e.code === 429 || (e.code >= 500 && e.retryAfterMs !== undefined));
        if (!throttled || attempt >= retries) throw e;
        const delayMs = jitter(e.retryAfterMs ?? 1000);
        this.options.onThrottled?.({ method, path, delayMs });
        await new Promise((r) => setTimeout(r, delayMs));
      }
    }
  }

  private async requestOnce<T>(method: string, path: string, opts: RequestOptions): Promise<T> {
    await this.limiter.take(method, path);
    this.options.onRequest?.({ method, path });
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    if (WRITES.has(method) && !url.searchParams.has('fieldManager')) url.searchParams.set('fieldManager', FIELD_MANAGER);
    const base = await this.agentOptions;
    const headers: Record<string, string> = { ...(base.headers as Record<string, string>), Accept: 'application/json' };
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['Content-Type'] = opts.contentType ?? 'application/json';
      // Node sends a DELETE's body without chunked encoding: without a length the server would
      // not read it, and on a kept-alive connection it would be taken for the next request.
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    return new Promise<T>((resolve, reject) => {
      const req = https.request(url, { ...base, method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* keep the text */
          }
          const code = res.statusCode ?? 0;
          this.options.onResponse?.({ method, path, code });
          if (code >= 200 && code < 300) resolve(parsed as T);
          else reject(new KubeApiError(code, parsed, method, url.pathname + url.search, parseRetryAfter(res.headers['retry-after'])));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: timeout`)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  /**
   * Streams watch events (one JSON object a line). `onEvent` gets each event, `onEnd` is called once
   * when the stream ends or fails (with the HTTP error, if any).
   */
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (e: { type: string; object: any }) => void,
    onEnd: (err?: Error) => void,
  ): WatchHandle {
    let ended = false;
    const end = (err?: Error) => {
      if (ended) return;
      ended = true;
      onEnd(err);
    };
    let req: ReturnType<typeof https.request> | undefined;
    void (async () => {
      const base = await this.agentOptions;
      const url = new URL(path, this.server);
      for (const [k, v] of Object.entries({ ...query, watch: 'true' })) if (v !== undefined) url.searchParams.set(k, String(v));
      req = https.request(url, { ...base, method: 'GET', headers: { ...(base.headers as Record<string, string>), Accept: 'application/json' } }, (res) => {
        this.options.onResponse?.({ method: 'WATCH', path, code: res.statusCode ?? 0 });
        if ((res.statusCode ?? 0) >= 300) {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            let body: unknown;
            try {
              body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            } catch {
              body = undefined;
            }
            end(new KubeApiError(res.statusCode ?? 0, body, 'WATCH', path, parseRetryAfter(res.headers['retry-after'])));
          });
          return;
        }
        // The start of an event whose line has not ended yet. Each chunk is searched on its own:
        // appending to one buffer and searching it again made V8 flatten it once per event.
        let partial = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          let start = 0;
          let nl: number;
          while ((nl = chunk.indexOf('\n', start)) >= 0) {
            const line = (partial ? partial + chunk.slice(start, nl) : chunk.slice(start, nl)).trim();
            partial = '';
            start = nl + 1;
            if (!line) continue;
            try {
              onEvent(JSON.parse(line));
            } catch (e) {
              end(e as Error);
              req?.destroy();
              return;
            }
          }
          if (start < chunk.length) partial += chunk.slice(start);
        });
        res.on('end', () => end());
        res.on('error', (e) => end(e));
        res.on('close', () => end());
      });
      req.on('error', (e) => end(e));
      req.end();
    })().catch((e) => end(e as Error));
    return {
      stop: () => {
        ended = true;
        req?.destroy();
      },
    };
  }
}

export function isNotFound(e: unknown): boolean {
  return e instanceof KubeApiError && e.code === 404;
}

export function isConflict(e: unknown): boolean {
  return e instanceof KubeApiError && e.code === 409;
}
