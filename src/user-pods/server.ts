/**
 * The HTTP face of the user pods API (seed 004): JSON POST endpoints and GET /get_podip_owner,
 * with the seed's request and response shapes. Bad input (not JSON, missing or mistyped fields)
 * is a 400 with a clear `error` beside the seed's default answer; nothing is created.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { isIP, type BlockList } from 'node:net';
import { Ajv } from 'ajv';
import type { Logger } from 'pino';
import { readCappedBody } from '../kube/http-endpoints.ts';
import { loneSurrogatePath } from '../inputs/lone-surrogates.ts';
import type { FrontEndAuth } from './auth.ts';
import { RequestError } from './errors.ts';
import type { UserPodsService } from './service.ts';

const MAX_BODY = 64 * 1024;
const userId = { type: 'string', minLength: 1 };
const podName = { type: 'string', minLength: 1, maxLength: 253 };
const settings = { type: 'object', additionalProperties: { type: 'object', additionalProperties: { type: 'string' } } };
const body = (required: string[], properties: Record<string, unknown>) => ({ type: 'object', required, properties });

const ajv = new Ajv({ allErrors: true, strict: false });
const SCHEMAS = {
  user: ajv.compile(body(['user_id'], { user_id: userId })),
  userPod: ajv.compile(body(['user_id', 'pod_name'], { user_id: userId, pod_name: podName })),
  create: ajv.compile(body(['yaml_url', 'user_id'], { yaml_url: { type: 'string', minLength: 1 }, user_id: userId, settings })),
};

type Handler = { schema: keyof typeof SCHEMAS; fallback: unknown; run: (svc: UserPodsService, b: any, remoteIp: () => string) => Promise<unknown> };

const ROUTES: Record<string, Handler> = {
  '/get_pods': { schema: 'user', fallback: [], run: (s, b) => s.getPods(b.user_id) },
  '/create_pod': { schema: 'create', fallback: { pod_name: '' }, run: (s, b, ip) => s.createPod({ yaml_url: b.yaml_url, user_id: b.user_id, settings: b.settings ?? {} }, ip()) },
  '/watch_create_pod': { schema: 'userPod', fallback: { ready: false }, run: (s, b) => s.watchCreatePod(b.user_id, b.pod_name) },
  '/delete_pod': { schema: 'userPod', fallback: { requested: false }, run: (s, b) => s.deletePod(b.user_id, b.pod_name) },
  '/watch_delete_pod': { schema: 'userPod', fallback: { deleted: true }, run: (s, b) => s.watchDeletePod(b.user_id, b.pod_name) },
  '/delete_all_user': { schema: 'user', fallback: { deleted: false }, run: (s, b) => s.deleteAllUser(b.user_id) },
};

/** Watch answers never tell another user's pod from a missing one: on any failure, the default. */
const QUIET_ON_ERROR = new Set(['/watch_create_pod', '/watch_delete_pod']);

const unmapped = (ip: string) => (ip.toLowerCase().startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip);

/**
 * The requester's IP, which picks the silo (NFS server, HOME_SERVER_IP) of a new pod. The peer
 * address, unless the peer is a trusted proxy: then X-Forwarded-For is walked from the right
 * (each proxy appends the address it saw) to the first address that is not a trusted proxy; the
 * entries left of it are the client's to choose and are ignored. A loopback requester is a test
 * and stands for `testingHost` (seed).
 */
export function remoteIp(req: http.IncomingMessage, opts: { testingHost: string; trustedProxies?: BlockList }): string {
  let ip = unmapped(req.socket.remoteAddress ?? '');
  const trusted = (a: string) => opts.trustedProxies?.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4') ?? false;
  if (isIP(ip) && trusted(ip)) {
    const fwd = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(fwd) ? fwd.join(',') : fwd ?? '').split(',').map((h) => h.trim()).filter(Boolean);
    for (const hop of hops.reverse()) {
      const addr = unmapped(hop);
      if (!isIP(addr)) throw new RequestError(400, `X-Forwarded-For from a trusted proxy holds "${hop.slice(0, 64)}", not an IP address`);
      ip = addr;
      if (!trusted(ip)) break;
    }
  }
  return ip === '::1' || (isIP(ip) === 4 && ip.startsWith('127.')) ? opts.testingHost : ip;
}

function send(res: http.ServerResponse, status: number, payload: unknown, type = 'application/json'): void {
  if (res.headersSent) return;
  const text = type === 'application/json' ? `${JSON.stringify(payload)}\n` : String(payload);
  // After an oversized body the connection is not reused (what is left of the body was dropped).
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(text), ...(status === 413 ? { Connection: 'close' } : {}) }).end(text);
}

/**
 * Logs an unexpected failure and returns what the client is told: an id to find it in the log,
 * never the message itself (an API server error can name another user's objects or NFS path).
 */
function internalError(log: Logger, path: string, e: unknown): string {
  const id = randomUUID().slice(0, 8);
  log.error({ path, id, err: (e as Error).message }, 'request failed');
  return `internal error ${id} (details in the server log)`;
}

function withError(fallback: unknown, error: string): unknown {
  return Array.isArray(fallback) ? { error } : { ...(fallback as object), error };
}

/**
 * `auth` decides who may call anything but /healthz (the kubelet's probe): a refused request is a
 * 401 and reaches no endpoint (./auth.ts; NO_AUTH only when the operator opted out).
 */
export function userPodsHandler(service: UserPodsService, opts: { testingHost: string; trustedProxies?: BlockList; log: Logger; auth: FrontEndAuth }): http.RequestListener {
  return (req, res) => {
    // A request target that is no URL path ("//[") is the client's error, not a crash.
    const url = URL.parse(req.url ?? '/', 'http://localhost');
    if (!url) return send(res, 400, { error: 'the request target is not a valid URL path' });
    const path = url.pathname;
    if (path !== '/healthz') {
      const refused = opts.auth.refusal(req);
      if (refused) {
        opts.log.warn({ path, peer: req.socket.remoteAddress }, 'unauthenticated request refused');
        res.setHeader('WWW-Authenticate', 'Bearer');
        return send(res, 401, { error: `unauthorized: ${refused}` });
      }
    }
    void (async () => {
      if (path === '/get_podip_owner') {
        if (req.method !== 'GET') return send(res, 405, { error: 'use GET' });
        const ip = url.searchParams.get('ip') ?? '';
        if (!isIP(ip)) return send(res, 400, `ip must be an IP address, not "${ip}"\n`, 'text/plain');
        const owner = await service.getPodIpOwner(ip);
        return owner ? send(res, 200, owner, 'text/plain') : send(res, 404, '', 'text/plain');
      }
      if (path === '/healthz') return send(res, 200, 'ok\n', 'text/plain');
      const route = ROUTES[path];
      if (!route) return send(res, 404, { error: `no endpoint ${path}` });
      if (req.method !== 'POST') return send(res, 405, withError(route.fallback, `${path} takes POST with a JSON body`));
      let parsed: unknown;
      try {
        parsed = JSON.parse((await readCappedBody(req, MAX_BODY, () => new RequestError(413, `request body larger than ${MAX_BODY} bytes`))).toString('utf8'));
      } catch (e) {
        if (e instanceof RequestError) return send(res, e.status, withError(route.fallback, e.message));
        return send(res, 400, withError(route.fallback, `the body must be JSON: ${(e as Error).message}`));
      }
      // JSON escapes can spell lone UTF-16 surrogates, which no Kubernetes name or label can hold.
      const broken = loneSurrogatePath(parsed);
      if (broken) return send(res, 400, withError(route.fallback, `invalid request: ${broken.join('.') || 'body'} holds a lone UTF-16 surrogate`));
      const validate = SCHEMAS[route.schema];
      if (!validate(parsed)) {
        const why = (validate.errors ?? []).map((e) => `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'body'} ${e.message}`).join('; ');
        return send(res, 400, withError(route.fallback, `invalid request: ${why}`));
      }
      try {
        send(res, 200, await route.run(service, parsed, () => remoteIp(req, opts)));
      } catch (e) {
        if (QUIET_ON_ERROR.has(path)) {
          if (!(e instanceof RequestError)) opts.log.error({ path, err: (e as Error).message }, 'request failed');
          return send(res, 200, route.fallback);
        }
        if (e instanceof RequestError && e.status < 500) return send(res, e.status, withError(route.fallback, e.message));
        send(res, 500, withError(route.fallback, internalError(opts.log, path, e)));
      }
    })().catch((e: Error) => send(res, 500, { error: internalError(opts.log, path, e) }));
  };
}
