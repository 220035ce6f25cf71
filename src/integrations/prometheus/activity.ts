/**
 * The last access to an Instance, read from Prometheus' HTTP query API (docs/behaviour.md §8.4):
 * `/-/healthy`, then instant queries that say whether the activity sources are scraped at all,
 * then one range query per source. Any failure is an error: the caller acts on no partial answer.
 */

export interface ActivityQueries {
  /** Base URL, e.g. `http://prometheus.monitoring:9090`. */
  readonly url: string;
  /** Instant queries; healthy when at least one gives a value > 0. */
  readonly available: readonly string[];
  /** Range query of the ingress' requests, `%s` the namespace then the Instance name. */
  readonly nginxData: string;
  /** Range queries of SSH and web SSH connections, `%s`/`%q` an environment's IP. */
  readonly sshData: readonly string[];
  readonly stepMs: number;
  /** How far back the range queries look. */
  readonly lookbackMs: number;
  readonly timeoutMs: number;
  /**
   * How long a healthy answer stands before it is asked again: at thousands of Instances the
   * health queries would otherwise be four requests of five. A failure is never kept.
   * @default 10 s
   */
  readonly healthTtlMs?: number;
}

export class PrometheusError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrometheusError';
  }
}

/** Go's `%s` and `%q` verbs, in order: the query flags keep upstream's format. */
export function formatQuery(template: string, args: readonly string[]): string {
  let i = 0;
  return template.replace(/%[sq%]/g, (verb) => {
    if (verb === '%%') return '%';
    const arg = args[i++] ?? '';
    return verb === '%q' ? JSON.stringify(arg) : arg;
  });
}

interface Series {
  values: [number, string][];
}

/**
 * The time of the latest change of any series in a range answer: a counter that moved. A series that
 * first appears inside the window (its first connection) counts at its first sample; after a
 * Prometheus restart that errs towards keeping Instances.
 */
export function lastChange(series: readonly Series[], windowStartSec: number, stepSec: number): number | undefined {
  let latest: number | undefined;
  for (const s of series) {
    const v = s.values;
    let at: number | undefined;
    for (let i = v.length - 1; i > 0; i--) {
      if (v[i][1] !== v[i - 1][1]) {
        at = v[i][0];
        break;
      }
    }
    if (at === undefined && v.length > 0 && v[0][0] > windowStartSec + stepSec) at = v[0][0];
    if (at !== undefined && (latest === undefined || at > latest)) latest = at;
  }
  return latest === undefined ? undefined : latest * 1000;
}

export class PrometheusActivity {
  private healthyUntil = 0;

  constructor(
    private readonly q: ActivityQueries,
    private readonly now: () => number = Date.now,
  ) {}

  private async get(path: string, params: Record<string, string>): Promise<unknown> {
    try {
      return await this.request(path, params);
    } catch (e) {
      this.healthyUntil = 0; // whatever failed, the next check asks again
      throw e;
    }
  }

  private async request(path: string, params: Record<string, string>): Promise<unknown> {
    const url = new URL(path, this.q.url.endsWith('/') ? this.q.url : `${this.q.url}/`);
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    let res: Response;
    try {
      res = await fetch(url, { signal: AbortSignal.timeout(this.q.timeoutMs) });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      throw new PrometheusError(`${url.origin}${url.pathname}: ${e.name === 'TimeoutError' ? `timed out after ${this.q.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message)}`);
    }
    const text = await res.text();
    if (path === '-/healthy') {
      if (!res.ok) throw new PrometheusError(`${url.origin}/-/healthy answered ${res.status}`);
      return undefined;
    }
    let body: { status?: string; error?: string; data?: { resultType?: string; result?: unknown } };
    try {
      body = JSON.parse(text);
    } catch {
      throw new PrometheusError(`${url.origin}${url.pathname} answered ${res.status} with a body that is not JSON`);
    }
    if (!res.ok || body.status !== 'success') throw new PrometheusError(`${url.origin}${url.pathname} answered ${res.status}: ${body.error ?? body.status ?? 'no status'}`);
    return body.data;
  }

  /** Throws when Prometheus is down or scrapes none of the activity sources. */
  async checkHealthy(): Promise<void> {
    if (this.now() < this.healthyUntil) return;
    this.healthyUntil = 0;
    await this.get('-/healthy', {});
    for (const query of this.q.available) {
      const data = (await this.get('api/v1/query', { query })) as { result?: { value?: [number, string] }[] };
      if ((data.result ?? []).some((r) => Number(r.value?.[1]) > 0)) {
        this.healthyUntil = this.now() + (this.q.healthTtlMs ?? 10_000);
        return;
      }
    }
    throw new PrometheusError(`no activity source is scraped (${this.q.available.join(', ')} give nothing)`);
  }

  /** The latest access to the Instance within the lookback, by browser or SSH to any of its IPs. */
  async lastActivity(namespace: string, name: string, ips: readonly string[]): Promise<number | undefined> {
    const end = this.now() / 1000;
    const start = end - this.q.lookbackMs / 1000;
    const step = Math.max(1, this.q.stepMs / 1000);
    const queries = [formatQuery(this.q.nginxData, [namespace, name]), ...ips.flatMap((ip) => this.q.sshData.map((t) => formatQuery(t, [ip])))];
    let latest: number | undefined;
    for (const query of queries) {
      const data = (await this.get('api/v1/query_range', { query, start: start.toFixed(3), end: end.toFixed(3), step: String(step) })) as { resultType?: string; result?: Series[] };
      if (data.resultType !== 'matrix') throw new PrometheusError(`the range query ${query} answered a ${data.resultType ?? 'missing'} result, not a matrix`);
      const at = lastChange(data.result ?? [], start, step);
      if (at !== undefined && (latest === undefined || at > latest)) latest = at;
    }
    return latest;
  }
}
