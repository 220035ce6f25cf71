import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readCappedBody } from '../../../src/controller/http-endpoints.ts';

const request = (...chunks: string[]) => Readable.from(chunks.map((c) => Buffer.from(c))) as unknown as IncomingMessage;

describe('the capped request body our HTTP servers (webhooks, user pods API) read', () => {
  it('returns the whole body when it fits, up to exactly the cap', async () => {
    expect((await readCappedBody(request('{"a":', '1}'), 7, () => new Error('too large'))).toString()).toBe('{"a":1}');
  });
  it('rejects with the caller\'s error past the cap and stops reading', async () => {
    const req = request('12345', '67890', 'more');
    await expect(readCappedBody(req, 8, () => new Error('body over 8 bytes'))).rejects.toThrow('body over 8 bytes');
    expect((req as unknown as Readable).destroyed).toBe(true);
  });
});
