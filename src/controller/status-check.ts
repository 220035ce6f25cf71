/** The HTTP GET of an Instance's status-check URL (docs/behaviour.md §8.1), with the configured timeout. */
export interface StatusCheckAnswer {
  statusCode: number;
  body: string;
}

/** GETs `url`; a transport failure or the timeout throws an error naming the URL. */
export async function getStatusCheck(url: string, timeoutMs: number): Promise<StatusCheckAnswer> {
  try {
    const res = await fetch(url, { method: 'GET', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(timeoutMs) });
    return { statusCode: res.status, body: await res.text() };
  } catch (e) {
    const err = e as Error;
    const reason = err.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : ((err.cause as Error | undefined)?.message ?? err.message);
    throw new Error(`status check GET ${url} failed: ${reason}`);
  }
}
