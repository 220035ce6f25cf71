/**
 * The image-list updater (docs/behaviour.md §10): read the registry, build the ImageList, write it by
 * server-side apply. One pass is all-or-nothing: a registry error (HTTP, transport, JSON) or an
 * API error is logged as one line and nothing is written — a partial answer would drop images
 * from the list that consumers (the dashboard) offer. The loop always goes on.
 */
import { KubeConfig, KubernetesObjectApi, PatchStrategy, type KubernetesObject } from '@kubernetes/client-node';
import type { ApiLevel } from '../../inputs/api-level.ts';
import type { ImageList } from '../../inputs/types.ts';
import { RegistryClient, RegistryError } from './client.ts';
import { buildImageListSpec, imageListObject, type RepositoryTags } from './image-list.ts';

/** Field manager of every ImageList write. */
export const IMAGE_LIST_FIELD_MANAGER = 'crownlabs-imagelist';

export interface ImageListWriter {
  apply(list: ImageList): Promise<void>;
}

export type Log = (line: string) => void;

export interface ImageListPassOptions {
  readonly registry: Pick<RegistryClient, 'catalog' | 'tags'>;
  readonly writer: ImageListWriter;
  readonly advertisedRegistryName: string;
  /** The API level of the installed ImageList CRD. Default 2e8aeb9. */
  readonly apiLevel?: ApiLevel;
  /** spec.projectBaseName (e62be9e only). */
  readonly projectBaseName?: string;
  readonly imageListName: string;
  readonly log: Log;
  /** Tag lists read at the same time. Default 8. */
  readonly concurrency?: number;
}

export type PassResult = { ok: true; images: number; versions: number } | { ok: false; stage: 'registry' | 'api'; message: string };

/** Reads every repository's tags with at most `concurrency` requests in flight; results keep catalog order. */
export async function readRepositories(registry: Pick<RegistryClient, 'catalog' | 'tags'>, concurrency = 8): Promise<RepositoryTags[]> {
  const names = await registry.catalog();
  const out: RepositoryTags[] = new Array(names.length);
  let next = 0;
  const worker = async () => {
    while (next < names.length) {
      const i = next++;
      out[i] = { name: names[i], tags: await registry.tags(names[i]) };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, names.length)) }, worker));
  return out;
}

export async function runImageListPass(opts: ImageListPassOptions): Promise<PassResult> {
  let repositories: RepositoryTags[];
  try {
    repositories = await readRepositories(opts.registry, opts.concurrency);
  } catch (err) {
    const message = err instanceof RegistryError ? err.message : `unexpected: ${(err as Error).message}`;
    opts.log(`imagelist: registry error, ImageList ${opts.imageListName} left unchanged: ${message}`);
    return { ok: false, stage: 'registry', message };
  }
  const spec = buildImageListSpec(opts.advertisedRegistryName, repositories, opts.apiLevel, opts.projectBaseName);
  try {
    await opts.writer.apply(imageListObject(opts.imageListName, spec));
  } catch (err) {
    const message = apiErrorLine(err);
    opts.log(`imagelist: API error writing ImageList ${opts.imageListName}: ${message}`);
    return { ok: false, stage: 'api', message };
  }
  const versions = spec.images.reduce((n, i) => n + i.versions.length, 0);
  opts.log(`imagelist: ImageList ${opts.imageListName} applied: ${spec.images.length} images, ${versions} versions (${repositories.length} repositories)`);
  return { ok: true, images: spec.images.length, versions };
}

/** One line out of a client-node ApiException (code + Status message) or any other error. */
export function apiErrorLine(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  if (typeof e?.code === 'number' && e.body !== undefined) {
    let body: { message?: string } | string | undefined = e.body as never;
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body) as { message?: string };
      } catch {
        /* keep the text */
      }
    }
    const msg = typeof body === 'string' ? body : (body?.message ?? JSON.stringify(body));
    return `HTTP ${e.code}: ${msg}`.replace(/\s+/g, ' ');
  }
  return String(e?.message ?? err).split('\n')[0];
}

/** Server-side apply of the ImageList, field manager `crownlabs-imagelist`, force (the list is ours). */
export class KubeImageListWriter implements ImageListWriter {
  private readonly api: KubernetesObjectApi;
  constructor(kc: KubeConfig) {
    this.api = KubernetesObjectApi.makeApiClient(kc);
  }
  async apply(list: ImageList): Promise<void> {
    // client-node types creationTimestamp as a Date; ours is the wire string (unset here).
    await this.api.patch(list as unknown as KubernetesObject, undefined, undefined, IMAGE_LIST_FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }
}

export interface ImageListLoopOptions extends ImageListPassOptions {
  readonly intervalSeconds: number;
  /** Aborting stops the loop after the pass in flight. */
  readonly signal?: AbortSignal;
}

/** Runs a pass now, then sleeps the interval after each pass (as upstream's loop) until aborted. */
export async function runImageListLoop(opts: ImageListLoopOptions): Promise<void> {
  while (!opts.signal?.aborted) {
    await runImageListPass(opts);
    await sleep(opts.intervalSeconds * 1000, opts.signal);
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
