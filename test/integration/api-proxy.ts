// A small HTTPS proxy on 127.0.0.1 in front of the REAL test API server, for fault tests: every
// request is forwarded (watches streamed) with the admin credentials, except those a rule answers
// itself (429 + Retry-After) or holds back while the test changes the cluster (a real 409 race).
// It never invents an API answer other than the 429 it is told to give.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { adminKubeConfig, testClusterDir } from './cluster.ts';

export interface ProxiedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: string;
  watch: boolean;
  at: number;
  /** Status sent back (429 when the proxy throttled it). */
  status?: number;
  /** A watch stream carried an ERROR event with this code (e.g. 410 Gone). */
  watchErrorCode?: number;
}

/**
 * `hold`: the request is sent once it resolves; `delayAnswer`: the request is sent at once, the
 * server's answer handed to the client once it resolves (a slow client reading it late).
 */
export type Rule = (
  r: ProxiedRequest,
) => { throttle: { retryAfterSeconds: number } } | { hold: () => Promise<void> } | { delayAnswer: () => Promise<void> } | undefined;

export interface ApiProxy {
  url: string;
  /** A kubeconfig for the proxy: the cluster's CA, the admin user. */
  kubeConfig: KubeConfig;
  log: ProxiedRequest[];
  rule?: Rule;
  /** Ends open (watch) streams, as a dropped connection would. */
  dropStreams(): void;
  close(): Promise<void>;
}

/**
 * Sets `proxy.rule` to hand the answer of the first `method path` request over only once `until`
 * resolves (the request reaches the server at once); the result tells whether it came yet.
 */
export function delayFirstAnswer(proxy: ApiProxy, method: string, path: string, until: () => Promise<void>): () => boolean {
  let delayed = false;
  proxy.rule = (r) => {
    if (delayed || r.method !== method || r.path !== path) return undefined;
    delayed = true;
    return { delayAnswer: until };
  };
  return () => delayed;
}

export async function startApiProxy(): Promise<ApiProxy> {
  const dir = testClusterDir();
  if (!dir) throw new Error('the API proxy needs TEST_CLUSTER_DIR (the API server certificate is reused)');
  const upstream = adminKubeConfig();
  const target = new URL(upstream.getCurrentCluster()!.server);
  const upstreamOptions: https.RequestOptions = {};
  await upstream.applyToHTTPSOptions(upstreamOptions);
  const log: ProxiedRequest[] = [];
  const open = new Set<IncomingMessage>();

  const forward = (req: IncomingMessage, res: ServerResponse, rec: ProxiedRequest, answerAfter?: () => Promise<void>) => {
    const out = https.request(
      { ...upstreamOptions, host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host }, agent: false },
      (up) => {
        if (answerAfter) {
          up.pause();
          void answerAfter().then(() => relay(up, res, rec));
        } else relay(up, res, rec);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  };

  const relay = (up: IncomingMessage, res: ServerResponse, rec: ProxiedRequest) => {
    rec.status = up.statusCode;
    res.writeHead(up.statusCode ?? 502, up.headers);
    open.add(up);
    // An upstream stream cut short (API server killed, dropStreams) cuts the client's too.
    up.on('close', () => {
      open.delete(up);
      if (!up.complete) res.destroy();
    });
    up.on('error', () => res.destroy());
    if (rec.watch) {
      up.on('data', (c: Buffer) => {
        const m = /"type":"ERROR".*?"code":(\d+)/.exec(c.toString('utf8'));
        if (m) rec.watchErrorCode = Number(m[1]);
      });
    }
    up.pipe(res);
    res.on('close', () => up.destroy());
  };

  const server = https.createServer(
    { cert: readFileSync(path.join(dir, 'certs/apiserver.crt')), key: readFileSync(path.join(dir, 'certs/apiserver.key')) },
    (req, res) => {
      const u = new URL(req.url ?? '/', 'https://proxy');
      const rec: ProxiedRequest = { method: req.method ?? 'GET', path: u.pathname, query: u.search, watch: u.searchParams.get('watch') === 'true', at: Date.now() };
      log.push(rec);
      const action = proxy.rule?.(rec);
      if (action && 'throttle' in action) {
        rec.status = 429;
        req.resume();
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': String(action.throttle.retryAfterSeconds) });
        res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too many requests (test proxy)', reason: 'TooManyRequests', code: 429 }));
        return;
      }
      if (action && 'hold' in action) {
        // Buffer the body so the request can be sent after the test's concurrent change.
        req.pause();
        void action.hold().then(() => forward(req, res, rec));
        return;
      }
      forward(req, res, rec, action && 'delayAnswer' in action ? action.delayAnswer : undefined);
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const kubeConfig = new KubeConfig();
  const cluster = upstream.getCurrentCluster()!;
  const user = upstream.getCurrentUser()!;
  kubeConfig.loadFromOptions({
    clusters: [{ ...cluster, name: 'proxy', server: `https://127.0.0.1:${port}` }],
    users: [user],
    contexts: [{ name: 'proxy', cluster: 'proxy', user: user.name }],
    currentContext: 'proxy',
  });
  const proxy: ApiProxy = {
    url: `https://127.0.0.1:${port}`,
    kubeConfig,
    log,
    dropStreams() {
      for (const s of open) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return proxy;
}
