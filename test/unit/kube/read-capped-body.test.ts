import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCappedBody } from '../../../src/kube/http-endpoints.ts';

const request = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c))) as unknown as IncomingMessage;

describe('the capped request body our HTTP servers (webhooks, user pods API) read', () => {
  it('returns the whole body when it fits, up to exactly the cap', async () => {
    expect((await readCappedBody(request('{"a":', '1}'), 7, () => new Error('too large'))).toString()).toBe('{"a":1}');
  });
  it('past the cap reads the rest of the body and drops it, then rejects with the caller\'s error', async () => {
    const req = request('12345', '67890', 'more');
    await expect(readCappedBody(req, 8, () => new Error('body over 8 bytes'))).rejects.toThrow('body over 8 bytes');
    // Read to the end: a socket closed with unread data resets, and the client loses the 413.
    expect((req as unknown as Readable).readableEnded).toBe(true);
  });
  it('stops waiting once more than the drain budget arrived past the cap', async () => {
    const req = new PassThrough();
    const read = readCappedBody(req as unknown as IncomingMessage, 4, () => new Error('too large'), { bytes: 6, ms: 60_000 });
    req.write('1234567'); // 3 over the cap: still draining
    req.write('89012'); // 8 over: past the budget
    await expect(read).rejects.toThrow('too large');
    expect(req.readableEnded).toBe(false);
  });
  it('stops waiting for a body that never ends once the drain time is up', async () => {
    const req = new PassThrough();
    const read = readCappedBody(req as unknown as IncomingMessage, 4, () => new Error('too large'), { bytes: 1 << 20, ms: 20 });
    req.write('123456');
    await expect(read).rejects.toThrow('too large');
  });
});
