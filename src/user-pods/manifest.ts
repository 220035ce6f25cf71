/**
 * The pod manifest of a create_pod request. Its URL must lie under one of the allowed prefixes
 * (seed 004's whitelist: only manifests the operators control), checked on the parsed and
 * normalised URL: same scheme, host and port, and a path inside the prefix's path at a segment
 * boundary. It is fetched over HTTP(S) with a time and size limit and no redirects (a redirect
 * could leave the whitelist), and must be one v1 Pod.
 */
import { parseAllDocuments } from 'yaml';
import type { ManifestPodSpec } from '../../constructs/user-pods/user-pod.ts';
import { badRequest } from './errors.ts';

export interface ManifestPod {
  apiVersion: 'v1';
  kind: 'Pod';
  metadata: { name: string; annotations?: Record<string, string>; [k: string]: unknown };
  spec: ManifestPodSpec;
}

export interface FetchOptions {
  timeoutMs?: number;
  maxBytes?: number;
}

/** An allowed manifest location: an origin and a path prefix. */
export interface ManifestPrefix {
  origin: string;
  path: string;
}

const MAX_URL = 2048;

/**
 * Why `url` is unsafe to compare as written, or undefined: anything a server might decode or
 * normalise differently from WHATWG URL parsing (encoded dots, slashes, backslashes and percent
 * signs, backslashes, `;` path parameters), whitespace or non-ASCII, userinfo, a fragment.
 */
function unsafeSpelling(url: string): string | undefined {
  if (url.length > MAX_URL) return `longer than ${MAX_URL} characters`;
  if (/[^\x21-\x7e]/.test(url)) return 'holds whitespace, control or non-ASCII characters';
  if (url.includes('\\')) return 'holds a backslash';
  if (/%(2e|2f|5c|25)/i.test(url)) return 'holds an encoded ".", "/", "\\" or "%"';
  if (url.includes('#')) return 'holds a fragment';
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?]*)/i.exec(url)?.[1];
  if (!authority) return 'is not an absolute http(s) URL with a host';
  if (authority.includes('@')) return 'holds a user name or password';
  return undefined;
}

function parseHttpUrl(url: string): URL | string {
  const why = unsafeSpelling(url);
  if (why) return why;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'is not http or https';
  if (parsed.username || parsed.password) return 'holds a user name or password';
  if (parsed.pathname.includes(';')) return 'holds a ";" in its path';
  return parsed;
}

/** An allowed prefix (`https://host[:port]/path/`) from its text; throws with the reason. */
export function parseManifestPrefix(text: string): ManifestPrefix {
  const parsed = parseHttpUrl(text);
  if (typeof parsed === 'string') throw new Error(`"${text}" ${parsed}`);
  if (parsed.search) throw new Error(`"${text}" holds a query`);
  if (/^[a-z]+:\/\/[^/]*:$/i.test(text)) throw new Error(`"${text}" ends before its port`);
  return { origin: parsed.origin, path: parsed.pathname };
}

/** Whether a normalised path lies inside a prefix path, at a segment boundary (`/a/b` holds `/a/b/c`, not `/a/bc`). */
function underPath(path: string, prefix: string): boolean {
  if (prefix.endsWith('/')) return path.startsWith(prefix);
  return path === prefix || path.startsWith(`${prefix}/`);
}

/**
 * The URL to fetch (normalised: dot segments resolved, default port dropped) when `url` lies under
 * one of the prefixes; a 400 naming the reason otherwise.
 */
export function checkWhitelist(url: string, prefixes: readonly ManifestPrefix[]): string {
  const shown = url.length > 200 ? `${url.slice(0, 200)}…` : url;
  const parsed = parseHttpUrl(url);
  if (typeof parsed === 'string') throw badRequest(`yaml_url ${shown} ${parsed}: not matched by the manifest whitelist`);
  if (!prefixes.some((p) => p.origin === parsed.origin && underPath(parsed.pathname, p.path))) {
    throw badRequest(`yaml_url ${shown} is not matched by the manifest whitelist (manifestUrlPrefixes)`);
  }
  return parsed.href;
}

export async function fetchManifest(url: string, prefixes: readonly ManifestPrefix[], opts: FetchOptions = {}): Promise<ManifestPod> {
  const target = checkWhitelist(url, prefixes);
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  let res: Response;
  try {
    // No redirects: the next hop would not have been checked against the prefixes.
    res = await fetch(target, { redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw badRequest(`could not fetch the manifest from ${target}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw badRequest(`could not fetch the manifest from ${target}: HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''}`);
  }
  const tooLarge = () => badRequest(`the manifest at ${target} is larger than ${maxBytes} bytes`);
  if (Number(res.headers.get('content-length')) > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop early (throw) cancels the rest of the download.
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge();
    chunks.push(chunk);
  }
  return parseManifest(Buffer.concat(chunks).toString('utf8'), target);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One v1 Pod with a name and named containers; everything else is left to the schema check. */
export function parseManifest(text: string, url: string): ManifestPod {
  const invalid = (why: string) => badRequest(`invalid manifest at ${url}: ${why}`);
  const docs = parseAllDocuments(text).filter((d) => d.contents !== null);
  if (docs.length !== 1) throw invalid(`expected one YAML document, found ${docs.length}`);
  const doc = docs[0]!;
  if (doc.errors.length) throw invalid(doc.errors[0]!.message.split('\n')[0]!);
  const obj = doc.toJS() as unknown;
  if (!isObject(obj)) throw invalid('not a mapping');
  if (obj.apiVersion !== 'v1' || obj.kind !== 'Pod') throw invalid(`expected apiVersion v1 kind Pod, got ${String(obj.apiVersion)} ${String(obj.kind)}`);
  const meta = obj.metadata;
  if (!isObject(meta) || typeof meta.name !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(meta.name)) {
    throw invalid('metadata.name must be a lower-case DNS label');
  }
  if (meta.annotations !== undefined && (!isObject(meta.annotations) || !Object.values(meta.annotations).every((v) => typeof v === 'string'))) {
    throw invalid('metadata.annotations must map strings to strings');
  }
  const spec = obj.spec;
  if (!isObject(spec) || !Array.isArray(spec.containers) || spec.containers.length === 0) throw invalid('spec.containers must list at least one container');
  for (const [i, c] of spec.containers.entries()) {
    if (!isObject(c) || typeof c.name !== 'string' || c.name === '') throw invalid(`spec.containers[${i}].name is required`);
    if (c.env !== undefined && !Array.isArray(c.env)) throw invalid(`spec.containers[${i}].env must be a list`);
    if (c.volumeMounts !== undefined && !Array.isArray(c.volumeMounts)) throw invalid(`spec.containers[${i}].volumeMounts must be a list`);
  }
  if (spec.volumes !== undefined && !Array.isArray(spec.volumes)) throw invalid('spec.volumes must be a list');
  return obj as unknown as ManifestPod;
}
