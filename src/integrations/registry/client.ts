/**
 * A small Docker Registry HTTP API v2 client: the two reads the image list needs (docs/behaviour.md §10).
 * Unlike the upstream Python job, the catalog (and each tag list) is read page by page, following
 * the `Link: <...>; rel="next"` header the registry sends when an answer was cut at `?n=` entries —
 * otherwise a registry with more repositories than one page silently loses images.
 */

export interface RegistryClientOptions {
  /** Base URL of the registry, e.g. `http://docker-registry.docker-registry:5000`. */
  readonly url: string;
  /** Basic-auth credentials; both must be given for auth to be used. */
  readonly username?: string;
  readonly password?: string;
  /** Timeout of every single HTTP request. Default 10 s. */
  readonly timeoutMs?: number;
  /** Entries asked per page (`?n=`). Default 100. The registry may cap it lower. */
  readonly pageSize?: number;
  /** Most pages followed for one listing, a guard against a registry looping its `Link`s. Default 10,000. */
  readonly maxPages?: number;
}

/** An HTTP, transport or JSON failure of one registry request; the message is one readable line. */
export class RegistryError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RegistryError';
  }
}

/** The `rel="next"` target of an RFC 8288 `Link` header, or undefined. */
export function nextLink(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(/,(?=\s*<)/)) {
    const m = /^\s*<([^>]*)>\s*(.*)$/.exec(part);
    if (!m) continue;
    const rels = [...m[2].matchAll(/;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;]+))/gi)].flatMap((r) => (r[1] ?? r[2]).split(/\s+/));
    if (rels.some((r) => r.toLowerCase() === 'next')) return m[1];
  }
  return undefined;
}

export class RegistryClient {
  private readonly base: URL;
  private readonly authorization?: string;
  private readonly timeoutMs: number;
  private readonly pageSize: number;
  private readonly maxPages: number;

  constructor(opts: RegistryClientOptions) {
    this.base = new URL(opts.url.endsWith('/') ? opts.url : `${opts.url}/`);
    if (opts.username && opts.password !== undefined) {
      this.authorization = `Basic ${Buffer.from(`${opts.username}:${opts.password}`).toString('base64')}`;
    }
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.pageSize = opts.pageSize ?? 100;
    this.maxPages = opts.maxPages ?? 10_000;
  }

  /** Every repository name of the registry, in the registry's order, across all pages. */
  async catalog(): Promise<string[]> {
    return this.paged(`v2/_catalog?n=${this.pageSize}`, 'repositories');
  }

  /** Every tag of a repository (an empty list when the registry answers `tags: null`). */
  async tags(repository: string): Promise<string[]> {
    const path = repository.split('/').map(encodeURIComponent).join('/');
    return this.paged(`v2/${path}/tags/list?n=${this.pageSize}`, 'tags');
  }

  private async paged(first: string, field: 'repositories' | 'tags'): Promise<string[]> {
    const out: string[] = [];
    let next: URL | undefined = new URL(first, this.base);
    const seen = new Set<string>();
    while (next) {
      if (seen.has(next.href) || seen.size >= this.maxPages) {
        throw new RegistryError(`GET ${next.href}: pagination does not end (Link rel="next" repeats)`, next.href);
      }
      seen.add(next.href);
      const { body, link } = await this.getJson(next);
      const items = (body as Record<string, unknown> | null)?.[field];
      if (items !== null && items !== undefined && !(Array.isArray(items) && items.every((x) => typeof x === 'string'))) {
        throw new RegistryError(`GET ${next.href}: malformed answer: "${field}" is not a list of strings`, next.href);
      }
      out.push(...((items as string[] | null | undefined) ?? []));
      // The Link target is relative to the registry (`</v2/_catalog?last=x&n=2>`).
      next = link ? new URL(link, next) : undefined;
    }
    return out;
  }

  private async getJson(url: URL): Promise<{ body: unknown; link?: string }> {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { Accept: 'application/json', ...(this.authorization ? { Authorization: this.authorization } : {}) },
        signal: AbortSignal.timeout(this.timeoutMs),
        redirect: 'follow',
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const why = e.name === 'TimeoutError' ? `timed out after ${this.timeoutMs} ms` : (e.cause?.code ?? e.cause?.message ?? e.message);
      throw new RegistryError(`GET ${url.href}: ${why}`, url.href);
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      throw new RegistryError(`GET ${url.href}: HTTP ${res.status}${text ? ` ${oneLine(text)}` : ''}`, url.href, res.status);
    }
    try {
      return { body: JSON.parse(text) as unknown, link: nextLink(res.headers.get('link')) };
    } catch {
      throw new RegistryError(`GET ${url.href}: malformed answer: not JSON: ${oneLine(text) || '(empty body)'}`, url.href, res.status);
    }
  }
}

function oneLine(text: string, max = 200): string {
  const s = text.replace(/\s+/g, ' ').trim();
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
