/** The HTTP GET of an Instance's status-check URL (docs/behaviour.md §8.1), with the configured timeout. */
export interface StatusCheckAnswer {
  statusCode: number;
  body: string;
}

/**
 * Largest body read. An answer is a small JSON object; the URL is the tenant's to choose, so an
 * endless body must not grow the controller (every Instance of every tenant) until it is killed.
 */
export const STATUS_CHECK_MAX_BODY = 64 * 1024;

/** GETs `url`; a transport failure, the timeout or an oversized body throws an error naming the URL. */
export async function getStatusCheck(url: string, timeoutMs: number): Promise<StatusCheckAnswer> {
  const failed = (reason: string) => new Error(`status check GET ${url} failed: ${reason}`);
  const signal = AbortSignal.timeout(timeoutMs);
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const res = await fetch(url, { method: 'GET', headers: { Accept: 'application/json' }, signal });
    for await (const chunk of res.body ?? []) {
      size += chunk.byteLength;
      if (size > STATUS_CHECK_MAX_BODY) {
        await res.body?.cancel().catch(() => undefined);
        break;
      }
      chunks.push(chunk);
    }
    if (size <= STATUS_CHECK_MAX_BODY) return { statusCode: res.status, body: Buffer.concat(chunks).toString('utf8') };
  } catch (e) {
    const err = e as Error;
    const reason = err.name === 'TimeoutError' || signal.aborted ? `no answer within ${timeoutMs} ms` : ((err.cause as Error | undefined)?.message ?? err.message);
    throw failed(reason);
  }
  throw failed(`the answer is larger than ${STATUS_CHECK_MAX_BODY} bytes`);
}
