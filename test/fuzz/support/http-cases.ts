// HTTP fuzz cases for the user-pods and webhook servers: a request built from a valid one by one
// edit (a field deleted, retyped, made hostile or huge), or random JSON, text, bytes, oversized
// bodies, odd methods, targets and headers, or raw bytes that are not HTTP at all.
import fc from 'fast-check';
import { anyJson, anyValue, nastyString } from './arbitraries.ts';
import { editInPlace, type InPlaceEdit, type Json } from './doc-case.ts';
import type { RawRequest, RawResponse } from './raw-http.ts';

export type BodyCase =
  | { kind: 'template'; edit?: InPlaceEdit }
  | { kind: 'json'; value: Json }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; bytes: readonly number[] }
  /** A valid-looking JSON body of the cap plus `over` bytes (negative: under the cap). */
  | { kind: 'sized'; over: number };

export interface HttpCase {
  /** Index into the server's routes; past their count, `target` is used. */
  route: number;
  target: string;
  /** Appended to the route: a query, a fragment, junk. */
  suffix: string;
  method: string;
  contentType: string | null;
  /** Extra headers, as sent (names and values hostile too). */
  headers: readonly (readonly [string, string])[];
  chunked: boolean;
  body: BodyCase;
  /** Bytes sent instead of a request. */
  raw?: readonly number[];
}

const nat = fc.nat({ max: 10_000 });

export const inPlaceEdit: fc.Arbitrary<InPlaceEdit> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), doc: fc.constant(0), at: nat }) },
  { weight: 5, arbitrary: fc.record({ op: fc.constant('set' as const), doc: fc.constant(0), at: nat, value: anyValue }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('setString' as const), doc: fc.constant(0), at: nat, value: nastyString }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('renameKey' as const), doc: fc.constant(0), at: nat, key: nastyString }) },
);

const bodyCase = (sizedWeight: number): fc.Arbitrary<BodyCase> => fc.oneof(
  { weight: 30, arbitrary: fc.constant({ kind: 'template' as const }) },
  { weight: 140, arbitrary: fc.record({ kind: fc.constant('template' as const), edit: inPlaceEdit }) },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('json' as const), value: anyJson }) },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('text' as const), text: fc.oneof(nastyString, fc.constantFrom('{', '{"a":', '[1,', '{"user_id":"x"', '\ufeff{}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', 'null', '1e999', '"\\ud800"')) }) },
  { weight: 10, arbitrary: fc.record({ kind: fc.constant('bytes' as const), bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 200 }) }) },
  { weight: sizedWeight, arbitrary: fc.record({ kind: fc.constant('sized' as const), over: fc.constantFrom(-1, 0, 1, 1000, 100_000) }) },
);

const HEADER_NAMES = ['X-Forwarded-For', 'X-Forwarded-Proto', 'X-Real-IP', 'Forwarded', 'Content-Encoding', 'Expect', 'Accept', 'Authorization', 'Cookie', 'X-Fuzz', 'Transfer-Encoding', 'Content-Length'];
const header = fc.tuple(
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,20}$/) }),
  fc.oneof(
    fc.constantFrom('10.0.0.21', '10.0.0.21, 127.0.0.1', '::1', '::ffff:10.0.0.20', '127.0.0.1', '', 'unknown', 'gzip', '100-continue', 'chunked', '0', '-1', 'x'.repeat(8000)),
    // Header values cannot hold CR, LF or NUL on the wire; anything else goes.
    nastyString.map((s) => s.replace(/[\r\n\0]/g, ' ')),
  ),
);

/** Requests; `sizedWeight` out of ~230 are bodies at the server's cap (costly where the cap is large). */
export const httpCase = (sizedWeight = 10): fc.Arbitrary<HttpCase> => fc.record(
  {
    route: fc.nat({ max: 12 }),
    target: fc.oneof(
      fc.constantFrom('/', '*', '//[', 'http://[::1', '//x:99999/', '/%zz', '/%00', '/..%2f..%2fetc', '/healthz/../get_pods', '//get_pods', '/get_pods/', '/GET_PODS', 'http://localhost/get_pods', '/' + 'a'.repeat(9000)),
      nastyString.map((s) => `/${encodeURI(s.replace(/[\ud800-\udfff]/g, ''))}`),
    ),
    suffix: fc.oneof({ weight: 5, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('?', '?a=1', '?ip=10.0.0.1', '?ip=%zz', '#x', '?' + 'x=1&'.repeat(3000), ';x', '/') }),
    method: fc.oneof({ weight: 12, arbitrary: fc.constant('POST') }, { weight: 3, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'CONNECT', 'TRACE') }, { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,10}$/) }),
    contentType: fc.oneof({ weight: 10, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: fc.constantFrom(null, 'text/plain', 'application/json; charset=latin1', 'APPLICATION/JSON', 'application/json;', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded') }),
    headers: fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(header, { maxLength: 3 }) }),
    chunked: fc.boolean(),
    body: bodyCase(sizedWeight),
    raw: fc.oneof(
      { weight: 30, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 300 }) },
      { weight: 1, arbitrary: fc.constantFrom('GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n', 'POST /get_pods HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 'POST /get_pods HTTP/1.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n0\r\n\r\n', 'GET / HTTP/9.9\r\n\r\n', 'GET /\r\n\r\n', '\r\n\r\n', 'POST /get_pods HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n').map((s) => [...Buffer.from(s, 'latin1')]) },
    ),
  },
  { requiredKeys: ['route', 'target', 'suffix', 'method', 'contentType', 'headers', 'chunked', 'body'] },
);

/** What a case's body is, built from the server's valid request for the route. */
export interface BuiltBody {
  body: Buffer;
  /** The edited field's path and whether the edit broke its type (deleted or retyped). */
  edited?: { path: (string | number)[]; structural: boolean };
  oversized: boolean;
}

const typeOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

function valueAt(v: unknown, path: readonly (string | number)[]): unknown {
  return path.reduce<unknown>((o, k) => (o === null || typeof o !== 'object' ? undefined : (o as Record<string | number, unknown>)[k]), v);
}

export function buildBody(c: HttpCase, template: () => unknown, cap: number): BuiltBody {
  const b = c.body;
  switch (b.kind) {
    case 'template': {
      const value = template();
      if (!b.edit) return { body: Buffer.from(JSON.stringify(value)), oversized: false };
      const before = structuredClone(value);
      const path = editInPlace(value, b.edit);
      const after = path ? valueAt(value, path) : undefined;
      const structural = path !== undefined && (b.edit.op === 'delete' || (b.edit.op === 'set' && typeOf(after) !== typeOf(valueAt(before, path))));
      const text = JSON.stringify(value) ?? 'null';
      return { body: Buffer.from(text), edited: path && { path, structural }, oversized: Buffer.byteLength(text) > cap };
    }
    case 'json': {
      const text = JSON.stringify(b.value) ?? 'null';
      return { body: Buffer.from(text), oversized: Buffer.byteLength(text) > cap };
    }
    case 'text':
      return { body: Buffer.from(b.text), oversized: Buffer.byteLength(b.text) > cap };
    case 'bytes':
      return { body: Buffer.from(b.bytes), oversized: b.bytes.length > cap };
    case 'sized': {
      const size = cap + b.over;
      const shell = '{"user_id":"","pad":""}';
      return { body: Buffer.from(`{"user_id":"","pad":"${'a'.repeat(Math.max(0, size - shell.length))}"}`), oversized: size > cap };
    }
  }
}

export function buildRequest(c: HttpCase, route: string | undefined, body: Buffer): RawRequest {
  if (c.raw) return { method: '', target: '', headers: [], body: Buffer.alloc(0), raw: Buffer.concat([Buffer.from(c.raw), Buffer.from('\r\n\r\n')]) };
  const headers: [string, string][] = [['Host', 'localhost'], ['Connection', 'close']];
  if (c.contentType !== null) headers.push(['Content-Type', c.contentType]);
  const own = new Set(c.headers.map(([k]) => k.toLowerCase()));
  let payload = body;
  if (c.chunked && !own.has('transfer-encoding') && !own.has('content-length')) {
    headers.push(['Transfer-Encoding', 'chunked']);
    const half = body.length >> 1;
    const chunk = (b: Buffer) => (b.length ? Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]) : Buffer.alloc(0));
    payload = Buffer.concat([chunk(body.subarray(0, half)), chunk(body.subarray(half)), Buffer.from('0\r\n\r\n')]);
  } else if (!own.has('content-length') && !own.has('transfer-encoding')) headers.push(['Content-Length', String(body.length)]);
  for (const [k, v] of c.headers) headers.push([k, v]);
  return { method: c.method, target: `${route ?? c.target}${c.suffix}`, headers, body: payload };
}

/**
 * Whether the request may go unanswered without a server at fault: raw bytes, a CONNECT (Node
 * hands it to a `connect` listener, which neither server has), or the case's own framing headers
 * (a lying length, an encoding): the server then rightly waits for a body that never comes.
 */
export function mayGoUnanswered(c: HttpCase): boolean {
  return c.raw !== undefined || c.method === 'CONNECT' || c.headers.some(([k]) => ['content-length', 'transfer-encoding', 'content-encoding', 'expect'].includes(k.toLowerCase()));
}

/** The names along a path (list indexes dropped): what a message about that field should mention. */
export function fieldNames(path: readonly (string | number)[]): string[] {
  return path.filter((p): p is string => typeof p === 'string');
}

export function describe(res: RawResponse): string {
  return res.ok ? `${res.status} ${JSON.stringify(res.body.slice(0, 300))}` : `${res.error} (received ${JSON.stringify(res.received)})`;
}
