// Random requests to the Tenant webhook server (HTTPS, in process on loopback, a Tenant lookup
// double): AdmissionReviews with one field deleted, retyped, made hostile or huge (userInfo.groups
// not a list, objects not Tenants…), random JSON, text, bytes, oversized bodies, odd methods,
// paths and headers, raw bytes. Every case: an answer (no reset, no hang), never a 5xx nor an
// admission answer with code 500, an error names the field an edit broke, a patch applies to the
// object, and the server stays up. An AdmissionReview sent as built (no edit) gets the decision the
// documented rules give (support/tenant-admission-oracle.ts).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import fastJsonPatch from 'fast-json-patch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tenant } from '../../src/inputs/types.ts';
import { MUTATE_PATH, startWebhookServer, VALIDATE_PATH, type WebhookServer } from '../../src/webhooks/server.ts';
import { makeServingCert } from '../support/tls.ts';
import { buildBody, buildRequest, describe as shown, fieldNames, httpCase, mayGoUnanswered, type HttpCase } from './support/http-cases.ts';
import { parserRejection, send, type RawResponse, type Target } from './support/raw-http.ts';
import { expectedMutation, expectedVerdict, type OracleWorld } from './support/tenant-admission-oracle.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/webhooks-http.test.ts';
/** The server's body cap (src/webhooks/server.ts MAX_BODY_BYTES). */
const CAP = 8 * 1024 * 1024;
const K = 'crownlabs.polito.it/operator-selector';
const PATHS = [MUTATE_PATH, VALIDATE_PATH, MUTATE_PATH, VALIDATE_PATH, '/healthz'];
const COULD_NOT_FETCH = 'could not fetch a tenant for the current user';

const tenant = (name: string, workspaces: { name: string; role: string }[], keys: string[] = []): Tenant => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: { name, labels: { [K]: 'prod' } },
  spec: { firstName: 'Ada', lastName: 'Lovelace', email: `${name}@example.com`, workspaces, publicKeys: keys, lastLogin: new Date(0).toISOString() } as Tenant['spec'],
});
const TENANTS: Record<string, Tenant> = {
  ada: tenant('ada', [{ name: 'tea', role: 'user' }], ['ssh-ed25519 AAAA ada']),
  mary: tenant('mary', [{ name: 'tea', role: 'manager' }]),
};

interface WebhookCase {
  http: HttpCase;
  operation: string;
  /** Who asks: the Tenant itself, a manager, a stranger, a bypass group member. */
  user: 'ada' | 'mary' | 'bob' | 'admin';
  /** The new object: the same, new keys, a new enrolment, a changed label. */
  change: 'none' | 'keys' | 'enrol' | 'label' | 'name';
}

const webhookCase: fc.Arbitrary<WebhookCase> = fc.record({
  // Bodies at an 8 MiB cap cost ~50 ms each over TLS: 1 in ~200 cases.
  http: httpCase(1),
  operation: fc.constantFrom('CREATE', 'UPDATE', 'UPDATE', 'DELETE', 'CONNECT'),
  user: fc.constantFrom('ada' as const, 'mary' as const, 'bob' as const, 'admin' as const),
  change: fc.constantFrom('none' as const, 'keys' as const, 'enrol' as const, 'label' as const, 'name' as const),
});

const USERNAMES = { ada: 'ada', mary: 'mary', bob: 'bob', admin: 'kubernetes-admin' } as const;
/** The server's configuration, as the oracle reads it. */
const WORLD: OracleWorld = { targetLabel: { key: K, value: 'prod' }, baseWorkspaces: ['utilities'], bypassGroups: ['system:masters'], bypassUsers: [], tenants: new Map(Object.entries(TENANTS)), now: 0 };

/** What the rules decide for an unedited review of `c` on `route`, against the server's answer; the problems found. */
function decisionProblems(c: WebhookCase, route: string, sent: { request: { object: Tenant; oldObject?: Tenant } }, response: Record<string, unknown>): string[] {
  if (c.operation !== 'CREATE' && c.operation !== 'UPDATE') return [];
  const req = { operation: c.operation as 'CREATE' | 'UPDATE', username: USERNAMES[c.user], groups: c.user === 'admin' ? ['system:masters', 'system:authenticated'] : ['system:authenticated'], object: sent.request.object, oldObject: sent.request.oldObject };
  const status = (response.status ?? {}) as { code?: number; message?: string };
  if (route === MUTATE_PATH) {
    const want = expectedMutation(WORLD, req);
    if (response.allowed !== true) return [`the mutating hook refused ${c.user}'s ${c.operation} (${status.code} ${status.message}); it refuses only malformed requests`];
    const patch = typeof response.patch === 'string' ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : [];
    const stored = fastJsonPatch.applyPatch(structuredClone(sent.request.object), patch, true, false).newDocument;
    const sorted = (l: Record<string, string> | undefined) => JSON.stringify(Object.entries(l ?? {}).sort());
    const wrong: string[] = [];
    if (sorted(stored.metadata.labels) !== sorted(want.labels)) wrong.push(`labels ${JSON.stringify(stored.metadata.labels)}, expected ${JSON.stringify(want.labels)}`);
    if (JSON.stringify(stored.spec.workspaces ?? []) !== JSON.stringify(want.workspaces)) wrong.push(`workspaces ${JSON.stringify(stored.spec.workspaces)}, expected ${JSON.stringify(want.workspaces)}`);
    if (JSON.stringify(response.warnings ?? []) !== JSON.stringify(want.warnings)) wrong.push(`warnings ${JSON.stringify(response.warnings)}, expected ${JSON.stringify(want.warnings)}`);
    return wrong.map((w) => `the mutating hook's answer to ${c.user}'s ${c.operation} (${c.change}): ${w}`);
  }
  // The validating hook alone sees the object as sent: no base workspace added.
  const want = expectedVerdict({ ...WORLD, baseWorkspaces: [] }, req);
  if (want.allowed) return response.allowed === true ? [] : [`${c.user}'s ${c.operation} (${c.change}) refused with ${status.code} "${status.message}", but the rules allow it`];
  if (response.allowed === true) return [`${c.user}'s ${c.operation} (${c.change}) allowed, but the rules refuse it (${want.why})`];
  if (status.code !== want.code || !want.accepts(String(status.message))) return [`${c.user}'s ${c.operation} (${c.change}) refused with ${status.code} "${status.message}", expected ${want.code} for: ${want.why}`];
  return [];
}

function review(c: WebhookCase): unknown {
  const old = structuredClone(TENANTS.ada);
  const object = structuredClone(old);
  if (c.change === 'keys') object.spec.publicKeys = ['ssh-ed25519 AAAA new'];
  if (c.change === 'enrol') object.spec.workspaces = [...(object.spec.workspaces ?? []), { name: 'coffee', role: 'manager' }];
  if (c.change === 'label') object.metadata.labels = { [K]: 'other' };
  if (c.change === 'name') object.spec.firstName = 'Eve';
  const username = USERNAMES[c.user];
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: 'crownlabs.polito.it', version: 'v1alpha2', kind: 'Tenant' },
      resource: { group: 'crownlabs.polito.it', version: 'v1alpha2', resource: 'tenants' },
      name: 'ada',
      operation: c.operation,
      userInfo: { username, uid: '1', groups: c.user === 'admin' ? ['system:masters', 'system:authenticated'] : ['system:authenticated'] },
      object,
      ...(c.operation === 'CREATE' ? {} : { oldObject: old }),
      dryRun: false,
    },
  };
}

/** Words a message about a broken field may use: its last two names (plus what stands for the root's type fields). */
function namesFor(p: readonly (string | number)[]): string[] {
  const names = fieldNames(p).slice(-2);
  return p.length === 1 && (p[0] === 'apiVersion' || p[0] === 'kind') ? [...names, 'AdmissionReview'] : names;
}

let dir = '';
let server: WebhookServer;
let target: Target;
const escaped: string[] = [];
const onRejection = (e: unknown) => escaped.push(`unhandled rejection (the process would crash): ${(e as Error)?.stack ?? String(e)}`);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'fuzz-webhooks-'));
  const certDir = path.join(dir, 'certs');
  const cert = await makeServingCert(path.join(dir, 'ca'), certDir);
  server = await startWebhookServer({
    port: 0,
    host: '127.0.0.1',
    certDir,
    targetLabel: { key: K, value: 'prod' },
    baseWorkspaces: ['utilities'],
    bypassGroups: ['system:masters'],
    getTenant: async (name) => {
      const t = TENANTS[name];
      if (!t) throw new Error(`tenants.crownlabs.polito.it "${String(name)}" not found`);
      return structuredClone(t);
    },
    now: () => 0,
  });
  target = { port: server.port, tls: { ca: cert.caPem } };
  process.on('unhandledRejection', onRejection);
});

afterAll(async () => {
  process.off('unhandledRejection', onRejection);
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The refusal in an answer: an HTTP error's text, or an admission answer's message when it is not allowed. */
function refusal(res: RawResponse): { code: number; message: string } | undefined {
  if (!res.ok) return undefined;
  if (res.status >= 400) return { code: res.status, message: res.body };
  try {
    const response = (JSON.parse(res.body) as { response?: { allowed?: unknown; status?: { code?: unknown; message?: unknown } } }).response;
    if (response?.allowed === true) return undefined;
    return { code: Number(response?.status?.code), message: String(response?.status?.message ?? '') };
  } catch {
    return undefined;
  }
}

async function check(c: WebhookCase): Promise<void> {
  escaped.length = 0;
  const route = c.http.route < PATHS.length ? PATHS[c.http.route] : undefined;
  const built = buildBody(c.http, () => review(c), CAP);
  const request = buildRequest(c.http, route, built.body);
  const webhook = !mayGoUnanswered(c.http) && (route === MUTATE_PATH || route === VALIDATE_PATH) && c.http.method === 'POST' && !/^[/;]/.test(c.http.suffix);
  // A big body nothing reads (a 404, 405 or content-type 400 answers first) may meet a reset as the server closes.
  const read = webhook && (c.http.contentType ?? '').split(';')[0].trim() === 'application/json';
  const loose = mayGoUnanswered(c.http) || (!read && built.body.length > 128 * 1024);
  const res = await send(target, request, loose ? 1500 : 30_000);
  const wrong: string[] = [...escaped];
  if (!res.ok) {
    if (!loose) wrong.push(`no answer: ${shown(res)}${built.oversized ? ' (a body over the cap must get its 413, #14.14)' : ''}`);
  } else if (parserRejection(res)) {
    // Node's HTTP parser refused the request before the handler saw it.
  } else {
    if (res.status >= 500) wrong.push(`answered ${shown(res)}: a 5xx (internal error)`);
    const json = (res.headers['content-type'] ?? '').startsWith('application/json');
    if (read && built.oversized && res.status !== 413) wrong.push(`a ${built.body.length}-byte body (cap ${CAP}) answered ${shown(res)}, not 413`);
    if (res.status >= 400 && c.http.method !== 'HEAD' && !res.body.trim()) wrong.push(`a ${res.status} without a message`);
    if (res.status === 200 && json && c.http.method !== 'HEAD') {
      let body: unknown;
      try {
        body = JSON.parse(res.body);
      } catch {
        wrong.push(`a JSON answer that is not JSON: ${shown(res)}`);
      }
      const response = isObject(body) ? body.response : undefined;
      const sent = (() => {
        try {
          return JSON.parse(built.body.toString('utf8')) as { request?: { uid?: unknown; object?: unknown } };
        } catch {
          return undefined;
        }
      })();
      if (!isObject(body) || body.kind !== 'AdmissionReview' || !isObject(response)) wrong.push(`a 200 that is no AdmissionReview answer: ${shown(res)}`);
      else {
        const status = isObject(response.status) ? response.status : {};
        if (response.uid !== sent?.request?.uid) wrong.push(`the answer's uid ${JSON.stringify(response.uid)} is not the request's`);
        if (typeof status.code === 'number' && status.code >= 500) wrong.push(`an admission answer with code ${status.code} (internal error): ${String(status.message)}`);
        if (response.allowed !== true && !(typeof status.message === 'string' && status.message)) wrong.push(`a refusal without a message: ${shown(res)}`);
        // Sent as built: the answer is the documented decision.
        if (c.http.body.kind === 'template' && !c.http.body.edit && !built.oversized && webhook && read && response.uid === sent?.request?.uid && (route === MUTATE_PATH || route === VALIDATE_PATH)) {
          wrong.push(...decisionProblems(c, route, sent as { request: { object: Tenant; oldObject?: Tenant } }, response));
        }
        if (typeof response.patch === 'string') {
          try {
            const patch = JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8'));
            fastJsonPatch.applyPatch(structuredClone(sent?.request?.object), patch, true, false);
          } catch (e) {
            wrong.push(`the patch does not apply to the object: ${(e as Error).message}`);
          }
        }
      }
    }
    // A 400 after an edit that broke a field's type names that field, unless the request without
    // the edit is refused alike (the refusal is about something else: the requester, the content type).
    const refused = refusal(res);
    if (webhook && built.edited?.structural && refused?.code === 400) {
      const names = namesFor(built.edited.path);
      const named = names.some((n) => refused.message.includes(n)) || (refused.message.startsWith(COULD_NOT_FETCH) && built.edited.path.includes('userInfo'));
      if (!named) {
        const baseline = refusal(await send(target, buildRequest(c.http, route, buildBody({ ...c.http, body: { kind: 'template' } }, () => review(c), CAP).body), 30_000));
        if (baseline?.message !== refused.message) wrong.push(`the refusal of a broken ${built.edited.path.join('.')} does not name the field: ${shown(res)}`);
      }
    }
  }
  const health = await send(target, { method: 'POST', target: MUTATE_PATH, headers: [['Host', 'localhost'], ['Connection', 'close'], ['Content-Type', 'application/json'], ['Content-Length', '2']], body: Buffer.from('{}') }, 30_000);
  if (!health.ok || health.status !== 400) wrong.push(`the server is not answering after the case: ${shown(health)}`);
  if (wrong.length) throw new Error(`${wrong.join('\n')}\nrequest: ${JSON.stringify(request.raw ? request.raw.toString('latin1') : `${request.method} ${request.target} ${JSON.stringify(request.headers)} ${request.body.toString('utf8').slice(0, 800)}`)}`);
}

describe('fuzz: the Tenant webhooks over HTTPS', () => {
  it('webhooks: HTTP', { timeout: timeoutOf('webhooks: HTTP', 150) }, async () => {
    const { runs } = await fuzz('webhooks: HTTP', FILE, webhookCase, check);
    if (!settings.path) expect(runs).toBe(runsOf('webhooks: HTTP'));
  });
});
