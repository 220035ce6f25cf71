/**
 * `/metrics` behind the API server's authentication and authorisation, as controller-runtime's
 * `WithAuthenticationAndAuthorization` filter: the bearer token is checked by a TokenReview, the
 * user it names by a SubjectAccessReview of a non-resource `get` on `/metrics` (granted by the
 * `<controller>-metrics-reader` ClusterRole). Answers are cached briefly, keyed by the token's
 * SHA-256, so a scrape every 30 s costs the API server two requests a minute at most.
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KubeClient } from '../kube/client.ts';

/** What the controller needs to ask (src/platform/derive-rbac.ts adds these to its ClusterRole). */
export const METRICS_AUTH_API_ACCESS = [
  { group: 'authentication.k8s.io', resource: 'tokenreviews', verbs: ['create'] },
  { group: 'authorization.k8s.io', resource: 'subjectaccessreviews', verbs: ['create'] },
] as const;

export const METRICS_PATH = '/metrics';

export type MetricsDecision = { status: 200; user: string } | { status: 401 | 403; reason: string };

export interface MetricsReviewOptions {
  /** How long an allowed answer is kept (controller-runtime's authenticator caches 1 min). */
  allowTtlMs?: number;
  /** How long a refusal is kept. */
  denyTtlMs?: number;
  /** Most tokens remembered (oldest dropped first). */
  maxEntries?: number;
  now?: () => number;
}

/** Reviews tokens through the API server; an API error rejects (a 500, not cached). */
export class MetricsAccessReview {
  private readonly cache = new Map<string, { decision: MetricsDecision; until: number }>();
  private readonly allowTtl: number;
  private readonly denyTtl: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly client: Pick<KubeClient, 'request'>,
    opts: MetricsReviewOptions = {},
  ) {
    this.allowTtl = opts.allowTtlMs ?? 60_000;
    this.denyTtl = opts.denyTtlMs ?? 10_000;
    this.maxEntries = opts.maxEntries ?? 1024;
    this.now = opts.now ?? Date.now;
  }

  async decide(token: string): Promise<MetricsDecision> {
    const key = createHash('sha256').update(token).digest('base64');
    const hit = this.cache.get(key);
    if (hit && hit.until > this.now()) return hit.decision;
    this.cache.delete(key);
    const decision = await this.ask(token);
    if (this.cache.size >= this.maxEntries) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, { decision, until: this.now() + (decision.status === 200 ? this.allowTtl : this.denyTtl) });
    return decision;
  }

  private async ask(token: string): Promise<MetricsDecision> {
    const tr = await this.client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const status = tr?.status ?? {};
    if (!status.authenticated || !status.user?.username) return { status: 401, reason: status.error ? `token not valid: ${status.error}` : 'token not valid' };
    const u = status.user as { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
    const sar = await this.client.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: u.username, uid: u.uid, groups: u.groups, extra: u.extra, nonResourceAttributes: { path: METRICS_PATH, verb: 'get' } },
      },
    });
    if (sar?.status?.allowed === true) return { status: 200, user: u.username };
    return { status: 403, reason: `${u.username} may not get ${METRICS_PATH}${sar?.status?.reason ? `: ${sar.status.reason}` : ''}` };
  }
}

/** The metrics handler behind the review: 401 without or with a bad token, 403 without the right, else the registry. */
export function secureMetricsHandler(registry: Registry, review: Pick<MetricsAccessReview, 'decide'>, log?: Logger): http.RequestListener {
  return (req, res) => {
    const text = (code: number, body: string, headers: Record<string, string> = {}) => res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }).end(`${body}\n`);
    const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '');
    if (!m) return text(401, 'Unauthorized', { 'WWW-Authenticate': 'Bearer' });
    review.decide(m[1]!).then(
      async (d) => {
        if (d.status !== 200) {
          log?.debug({ status: d.status, reason: d.reason }, 'metrics request refused');
          return text(d.status, d.status === 401 ? 'Unauthorized' : 'Forbidden', d.status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {});
        }
        if (req.url?.split('?')[0] !== METRICS_PATH) return text(404, 'not found');
        res.writeHead(200, { 'Content-Type': registry.contentType }).end(await registry.metrics());
      },
      (e: Error) => {
        log?.warn({ err: e.message }, 'metrics authentication: the API server review failed');
        text(500, 'authentication or authorisation review failed');
      },
    ).catch((e: Error) => text(500, e.message));
  };
}
