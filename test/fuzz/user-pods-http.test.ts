// Random requests to the user-pods API server (the handler `crownlabs user-pods-api` serves), in
// process on loopback, over an in-memory API server double and a local manifest server: valid
// requests with one field edited, random JSON, text and bytes, oversized bodies, odd methods,
// targets and headers, hostile manifest URLs and manifests, raw bytes. Every case: an answer
// (no reset, no hang), never a 5xx, a 4xx names the field an edit broke, and the server stays up.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { pino } from 'pino';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BearerToken, frontEndAuth } from '../../src/user-pods/auth.ts';
import { loadUserPodsConfig, type UserPodsConfig } from '../../src/user-pods/config.ts';
import { userPodsHandler } from '../../src/user-pods/server.ts';
import { UserPodsService } from '../../src/user-pods/service.ts';
import { FakePodFiles } from '../support/pod-files.ts';
import { nastyString } from './support/arbitraries.ts';
import { FakeKube } from './support/fake-kube.ts';
import { buildBody, buildRequest, describe as shown, fieldNames, mayGoUnanswered, httpCase, inPlaceEdit, type HttpCase } from './support/http-cases.ts';
import type { InPlaceEdit } from './support/doc-case.ts';
import { editInPlace } from './support/doc-case.ts';
import { parserRejection, send } from './support/raw-http.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/user-pods-http.test.ts';
/** The server's body cap (src/user-pods/server.ts MAX_BODY). */
const CAP = 64 * 1024;
/** Past this, a body the server does not read may be cut short by the server's close (kernel buffers). */
const UNREAD_BODY = 128 * 1024;
const ROUTES = ['/get_pods', '/create_pod', '/watch_create_pod', '/delete_pod', '/watch_delete_pod', '/delete_all_user', '/get_podip_owner', '/healthz'];
const JSON_ROUTES = new Set(ROUTES.slice(0, 6));
const USER = 'alice@dtu.dk';
const HEALTH = { method: 'GET', target: '/healthz', headers: [['Host', 'localhost'], ['Connection', 'close']] as [string, string][], body: Buffer.alloc(0) };
const POD = 'jupyter-alice-dtu-dk';
/** The front end's bearer token: every fuzzed request carries it, so the cases reach the endpoints. */
const TOKEN = 'fuzz-front-end-token';
const auth = frontEndAuth({ token: BearerToken.fromValue(TOKEN) });
const authed = <R extends { headers: [string, string][]; raw?: Buffer }>(r: R): R => (r.raw ? r : { ...r, headers: [...r.headers.slice(0, 2), ['Authorization', `Bearer ${TOKEN}`], ...r.headers.slice(2)] });

const JUPYTER = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'jupyter', annotations: { 'sciencedata.dk/copy-token': 'token', 'sciencedata.dk/ingress-port': '8888' } },
  spec: {
    containers: [
      {
        name: 'jupyter',
        image: 'LOCALREGISTRY/jupyter:latest',
        ports: [{ containerPort: 22 }, { containerPort: 8888 }],
        env: [{ name: 'SSH_PUBLIC_KEY', value: '' }],
        volumeMounts: [{ name: 'sciencedata', mountPath: '/root/data' }],
        resources: { limits: { cpu: '1', memory: '1Gi' } },
      },
    ],
  },
};
const MANIFESTS: Record<string, string> = {
  'jupyter.yaml': stringify(JUPYTER),
  'plain.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: plain}\nspec:\n  containers: [{name: main, image: busybox}]\n',
  'two.yaml': 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: m}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: b}\nspec: {containers: [{name: m}]}\n',
  'bomb.yaml': `apiVersion: v1\nkind: Pod\nmetadata: {name: bomb}\nspec:\n  containers: [{name: m, image: x}]\n  x: ${Array.from({ length: 9 }, (_, d) => `&b${d} [${Array.from({ length: 9 }, () => (d ? `*b${d - 1}` : 'lol')).join(',')}]`).join(', ')}\n`,
};

/** Where the yaml_url of a create_pod case points. */
type ManifestChoice =
  | { kind: 'named'; name: string }
  /** The jupyter pod with one edit, served as YAML or JSON at /manifests/echo/<base64url>. */
  | { kind: 'echo'; edit: InPlaceEdit; json: boolean }
  | { kind: 'url'; url: string };

interface UserPodsCase {
  http: HttpCase;
  manifest: ManifestChoice;
  /** Whether the user already has a pod when the request comes. */
  prior: boolean;
}

const manifestChoice: fc.Arbitrary<ManifestChoice> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('named' as const), name: fc.constantFrom('jupyter.yaml', 'plain.yaml', 'two.yaml', 'bomb.yaml', 'missing.yaml', 'redirect.yaml', 'huge.yaml', '../evil.yaml', '%2e%2e/evil.yaml', '..%2fevil.yaml', 'jupyter.yaml?x=1', 'jupyter.yaml#frag') }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('echo' as const), edit: inPlaceEdit, json: fc.boolean() }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('url' as const),
      url: fc.oneof(
        nastyString,
        fc.constantFrom('', 'file:///etc/passwd', 'http://evil.invalid/manifests/jupyter.yaml', 'https://evil.invalid/x?BASE/manifests/', 'BASE/manifests/', 'BASE@evil.invalid/manifests/jupyter.yaml', 'http://user:pw@127.0.0.1:1/manifests/jupyter.yaml', 'BASE/manifests/\u2028', 'BASE/manifests/%00', 'BASE/MANIFESTS/jupyter.yaml', 'gopher://127.0.0.1/', 'BASE/manifests/' + 'a'.repeat(70_000)),
      ),
    }),
  },
);

const userPodsCase: fc.Arbitrary<UserPodsCase> = fc.record({ http: httpCase(), manifest: manifestChoice, prior: fc.boolean() });

let manifests: http.Server;
let api: http.Server;
let base = '';
let apiPort = 0;
let config: UserPodsConfig;
const log = pino({ level: 'silent' });
/** The handler of the current case (a new service over a new fake cluster each case). */
let current: http.RequestListener = (_req, res) => res.writeHead(503).end();
/** Errors the server raised outside an answer during the current case. */
const escaped: string[] = [];
const onRejection = (e: unknown) => escaped.push(`unhandled rejection (the process would crash): ${(e as Error)?.stack ?? String(e)}`);

function manifestUrl(m: ManifestChoice): string {
  if (m.kind === 'named') return `${base}/manifests/${m.name}`;
  if (m.kind === 'url') return m.url.replaceAll('BASE', base);
  const pod = structuredClone(JUPYTER) as unknown;
  editInPlace(pod, m.edit);
  const json = () => JSON.stringify(pod) ?? 'null';
  let text: string;
  try {
    text = m.json ? json() : stringify(pod);
  } catch {
    text = json(); // nested too deep for the yaml package's writer; JSON is YAML too
  }
  return `${base}/manifests/echo/${Buffer.from(text).toString('base64url')}.yaml`;
}

beforeAll(async () => {
  manifests = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    const echo = /^\/manifests\/echo\/([A-Za-z0-9_-]*)\.yaml$/.exec(path);
    if (echo) return void res.writeHead(200).end(Buffer.from(echo[1], 'base64url'));
    if (path === '/manifests/redirect.yaml') return void res.writeHead(302, { Location: '/manifests/plain.yaml' }).end();
    if (path === '/manifests/huge.yaml') return void res.writeHead(200).end('#'.repeat(2 * 1024 * 1024));
    const name = path.startsWith('/manifests/') ? path.slice('/manifests/'.length) : undefined;
    if (name && MANIFESTS[name]) return void res.writeHead(200).end(MANIFESTS[name]);
    res.writeHead(404).end('not found');
  });
  await new Promise<void>((r) => manifests.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(manifests.address() as AddressInfo).port}`;
  const loaded = loadUserPodsConfig({
    env: {
      BACKEND_NAMESPACE: 'sciencedata',
      BACKEND_WHITELISTMANIFESTREGEX: `^${base.replace(/[.]/g, '[.]')}/manifests/`,
      BACKEND_TIMEOUTCREATE: '5s',
      BACKEND_TIMEOUTDELETE: '5s',
      BACKEND_INGRESSDOMAIN: 'pods.test',
      BACKEND_LOCALREGISTRYURL: 'registry.test:5000',
      BACKEND_HOSTNAMELIST: '[{"hostname":"silo7.sciencedata.test","address":"10.0.0.20"}]',
    },
  });
  expect(loaded.problems).toEqual([]);
  config = loaded.config;
  api = http.createServer((req, res) => {
    try {
      current(req, res);
    } catch (e) {
      escaped.push(`the request handler threw (the user-pods-api process would crash): ${(e as Error)?.stack ?? String(e)}`);
      res.destroy();
    }
  });
  await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
  apiPort = (api.address() as AddressInfo).port;
  process.on('unhandledRejection', onRejection);
});

afterAll(async () => {
  process.off('unhandledRejection', onRejection);
  api?.closeAllConnections();
  manifests?.closeAllConnections();
  await Promise.all([api, manifests].map((s) => new Promise<void>((r) => (s ? s.close(() => r()) : r()))));
});

const NOT_JSON = Symbol('not JSON');
/** The `error` of a JSON answer (undefined when none), or NOT_JSON. */
function jsonError(body: string): unknown {
  try {
    return (JSON.parse(body) as { error?: unknown } | null)?.error;
  } catch {
    return NOT_JSON;
  }
}

async function check(c: UserPodsCase): Promise<void> {
  escaped.length = 0;
  const service = new UserPodsService({ client: new FakeKube().client(), config, files: new FakePodFiles(), log, pollMs: 10, tokenAttempts: 1, tokenRetryMs: 1 });
  current = userPodsHandler(service, { testingHost: config.testingHost, log, auth });
  try {
    if (c.prior) await service.createPod({ yaml_url: `${base}/manifests/jupyter.yaml`, user_id: USER, settings: {} }, config.testingHost);
    const route = c.http.route < ROUTES.length ? ROUTES[c.http.route] : undefined;
    const template = () =>
      route === '/create_pod'
        ? { yaml_url: manifestUrl(c.manifest), user_id: USER, settings: { jupyter: { SSH_PUBLIC_KEY: 'ssh-ed25519 AAAA alice@dtu' } } }
        : route === '/get_pods' || route === '/delete_all_user'
          ? { user_id: USER }
          : { user_id: USER, pod_name: POD };
    const built = buildBody(c.http, template, CAP);
    const request = authed(buildRequest(c.http, route === '/get_podip_owner' && !c.http.suffix ? `${route}?ip=10.1.0.0` : route, built.body));
    // A request the route's handler reads (a suffix `/…` or `;…` makes it another, unknown path).
    const posted = !mayGoUnanswered(c.http) && route !== undefined && JSON_ROUTES.has(route) && c.http.method === 'POST' && !/^[/;]/.test(c.http.suffix);
    // A big body nothing reads (a 404 or 405 answers first) may meet a reset as the server closes.
    const loose = mayGoUnanswered(c.http) || (!posted && built.body.length > UNREAD_BODY);
    const res = await send({ port: apiPort }, request, loose ? 1500 : 20_000);
    const wrong: string[] = [...escaped];
    if (!res.ok) {
      if (!loose) wrong.push(`no answer: ${shown(res)}${built.oversized ? ' (a body over the cap must get its 413, #14.14)' : ''}`);
    } else if (parserRejection(res)) {
      // Node's HTTP parser refused the request (e.g. headers over 16 KiB) before the handler saw it.
    } else {
      if (res.status >= 500) wrong.push(`answered ${shown(res)}: a 5xx (internal error)`);
      if (posted && built.oversized && res.status !== 413) wrong.push(`a ${built.body.length}-byte body (cap ${CAP}) answered ${shown(res)}, not 413`);
      const json = (res.headers['content-type'] ?? '').startsWith('application/json');
      if (res.status >= 400 && c.http.method !== 'HEAD' && !(route === '/get_podip_owner' && res.status === 404) && !res.body.trim()) wrong.push(`a ${res.status} without a message`);
      const error = json && c.http.method !== 'HEAD' ? jsonError(res.body) : undefined;
      if (error === NOT_JSON) wrong.push(`a JSON answer that is not JSON: ${shown(res)}`);
      else if (json && c.http.method !== 'HEAD' && res.status >= 400 && (typeof error !== 'string' || !error)) wrong.push(`a ${res.status} without an "error" message: ${shown(res)}`);
      // A 400 after an edit that broke a field's type names that field, unless the request without
      // the edit is refused alike (the refusal is about something else: the manifest, the user's pods).
      if (posted && res.status === 400 && built.edited?.structural && typeof error === 'string') {
        const names = fieldNames(built.edited.path).slice(-2);
        if (names.length && !names.some((n) => error.includes(n))) {
          const again = await send({ port: apiPort }, authed(buildRequest(c.http, route, buildBody({ ...c.http, body: { kind: 'template' } }, template, CAP).body)), 20_000);
          if ((again.ok ? jsonError(again.body) : undefined) !== error) wrong.push(`the 400 for a broken ${built.edited.path.join('.')} does not name the field: ${shown(res)}`);
        }
      }
    }
    const health = await send({ port: apiPort }, HEALTH, 20_000);
    if (!health.ok || health.status !== 200) wrong.push(`the server is down after the case: GET /healthz → ${shown(health)}`);
    if (wrong.length) throw new Error(`${wrong.join('\n')}\nrequest: ${JSON.stringify(request.raw ? request.raw.toString('latin1') : `${request.method} ${request.target} ${JSON.stringify(request.headers)} ${request.body.toString('utf8').slice(0, 500)}`)}`);
  } finally {
    service.stop();
  }
}

describe('fuzz: the user-pods API over HTTP', () => {
  it('user-pods: HTTP', { timeout: timeoutOf('user-pods: HTTP', 100) }, async () => {
    const { runs } = await fuzz('user-pods: HTTP', FILE, userPodsCase, check);
    if (!settings.path) expect(runs).toBe(runsOf('user-pods: HTTP'));
  });
});
