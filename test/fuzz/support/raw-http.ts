// A raw HTTP/1.1 client for the fuzzers: the request line, headers and body go on the wire as
// given (Node's own client refuses much of what an attacker can send), and the answer is read
// back as status, headers and body, or as what went wrong (reset, close, no answer in time).
import net from 'node:net';
import tls from 'node:tls';

export interface RawRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: Buffer;
  /** Bytes sent as they are instead of a request built from the fields above. */
  raw?: Buffer;
}

export type RawResponse =
  | { ok: true; status: number; headers: Record<string, string>; body: string }
  | { ok: false; error: string; received: string };

export function encodeRequest(r: RawRequest): Buffer {
  if (r.raw) return r.raw;
  const head = `${r.method} ${r.target} HTTP/1.1\r\n${r.headers.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), r.body]);
}

/** Parses one response; undefined while incomplete (closed says whether more can come). */
function parse(buf: Buffer, closed: boolean, head: boolean): RawResponse | undefined {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = buf.subarray(0, end).toString('latin1').split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!m) return { ok: false, error: `not an HTTP response: ${JSON.stringify(statusLine.slice(0, 80))}`, received: buf.toString('latin1', 0, 200) };
  // An interim answer (100 Continue): the real one follows.
  if (m[1].startsWith('1')) return parse(buf.subarray(end + 4), closed, head);
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  const bodyStart = end + 4;
  const length = headers['content-length'];
  let body: Buffer;
  // A HEAD answer announces the length of a body it does not send.
  if (head) body = Buffer.alloc(0);
  else if (length !== undefined) {
    if (buf.length - bodyStart < Number(length)) return undefined;
    body = buf.subarray(bodyStart, bodyStart + Number(length));
  } else if (headers['transfer-encoding']?.includes('chunked')) {
    const chunks: Buffer[] = [];
    let at = bodyStart;
    for (;;) {
      const eol = buf.indexOf('\r\n', at);
      if (eol < 0) return undefined;
      const size = parseInt(buf.toString('latin1', at, eol), 16);
      if (!Number.isFinite(size)) return { ok: false, error: 'bad chunk size', received: buf.toString('latin1', 0, 200) };
      if (size === 0) break;
      if (buf.length < eol + 2 + size + 2) return undefined;
      chunks.push(buf.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(chunks);
  } else if (!closed && Number(m[1]) !== 204 && Number(m[1]) !== 304) return undefined;
  else body = buf.subarray(bodyStart);
  return { ok: true, status: Number(m[1]), headers, body: body.toString('utf8') };
}

export interface Target {
  port: number;
  /** TLS: the CA to trust; the session of the last connection is resumed (no RSA per case). */
  tls?: { ca: string };
}

let lastSession: Buffer | undefined;

/** Sends one request on a fresh connection and reads one response (or says why there is none). */
export function send(target: Target, request: RawRequest, timeoutMs: number): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = target.tls
      ? tls.connect({ host: '127.0.0.1', port: target.port, ca: target.tls.ca, servername: 'localhost', session: lastSession })
      : net.connect(target.port, '127.0.0.1');
    if (target.tls) (socket as tls.TLSSocket).on('session', (s: Buffer) => (lastSession = s));
    let buf = Buffer.alloc(0);
    let settled = false;
    const head = !request.raw && request.method === 'HEAD';
    const finish = (r: RawResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ ok: false, error: `no answer in ${timeoutMs} ms`, received: buf.toString('latin1', 0, 200) }), timeoutMs);
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const r = parse(buf, false, head);
      if (r) finish(r);
    });
    socket.on('end', () => finish(parse(buf, true, head) ?? { ok: false, error: buf.length ? 'connection closed in the middle of the answer' : 'connection closed without an answer', received: buf.toString('latin1', 0, 200) }));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      // A server may close while the client still writes (EPIPE): what it answered still counts.
      const r = parse(buf, true, head);
      finish(r ?? { ok: false, error: `${e.code ?? e.message} without an answer`, received: buf.toString('latin1', 0, 200) });
    });
    // The socket stays open for the answer: Node's servers drop a half-closed connection unanswered.
    // Raw bytes may not make a whole request; the write side is closed after a while, so a server
    // still waiting for the rest sees the end instead of waiting out its header timeout.
    socket.on(target.tls ? 'secureConnect' : 'connect', () => {
      socket.write(encodeRequest(request));
      if (request.raw) setTimeout(() => !settled && socket.end(), 300).unref();
    });
  });
}

/**
 * An answer Node's HTTP server gives before any handler sees the request (unreadable HTTP, headers
 * over 16 KiB, an `Expect` it cannot meet): no Content-Type, no body.
 */
export function parserRejection(res: RawResponse): boolean {
  return res.ok && [400, 413, 417, 431].includes(res.status) && !res.headers['content-type'] && !res.body;
}
