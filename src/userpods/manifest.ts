/**
 * The pod manifest of a create_pod request: its URL must match the whitelist regex (seed 004:
 * only manifests the operators control), it is fetched over HTTP(S) with a time and size limit
 * and no redirects (a redirect could leave the whitelist), and must be one v1 Pod.
 */
import { parseAllDocuments } from 'yaml';
import type { ManifestPodSpec } from '../../constructs/userpod/user-pod.ts';
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

export function checkWhitelist(url: string, whitelistRegex: string): void {
  if (!new RegExp(whitelistRegex).test(url)) throw badRequest(`yaml_url ${url} is not matched by the manifest whitelist`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(`yaml_url ${url} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw badRequest(`yaml_url ${url}: only http and https manifests are fetched`);
}

export async function fetchManifest(url: string, whitelistRegex: string, opts: FetchOptions = {}): Promise<ManifestPod> {
  checkWhitelist(url, whitelistRegex);
  const maxBytes = opts.maxBytes ?? 1024 * 1024;
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw badRequest(`could not fetch the manifest from ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw badRequest(`could not fetch the manifest from ${url}: HTTP ${res.status}${res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : ''}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > maxBytes) throw badRequest(`the manifest at ${url} is larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  return parseManifest(Buffer.concat(chunks).toString('utf8'), url);
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
