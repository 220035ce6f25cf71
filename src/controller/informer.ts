/**
 * A list+watch cache of one kind (optionally label/field selected): lists, then watches from the
 * list's resourceVersion, resumes from the last seen resourceVersion (bookmarks included) when a
 * watch ends, and re-lists when the server answers 410 Gone. Objects are indexed by the
 * composer parent-id label, so children are found by their parent without scanning.
 */
import { COMPOSER } from '../model/labels.ts';
import { jitter, KubeApiError, type KubeClient, type WatchHandle } from './kube-client.ts';

export interface CachedObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { uid: string; kind: string; name: string; controller?: boolean }[];
    deletionTimestamp?: string;
    finalizers?: string[];
    [k: string]: unknown;
  };
  [k: string]: unknown;
}

export type InformerEvent = 'add' | 'update' | 'delete';
export type InformerHandler = (type: InformerEvent, obj: CachedObject, old?: CachedObject) => void;

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Called when a list or watch fails (logged by the owner). */
  onError?: (err: Error) => void;
  /** Called after every (re-)list, with the reason. */
  onList?: (reason: 'initial' | 'gone' | 'error') => void;
}

export function cacheKey(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export class Informer {
  readonly store = new Map<string, CachedObject>();
  private readonly byParent = new Map<string, Set<string>>();
  private readonly indexers = new Map<string, { fn: (o: CachedObject) => string[]; map: Map<string, Set<string>> }>();
  private readonly handlers: InformerHandler[] = [];
  private resourceVersion = '';
  private watchHandle?: WatchHandle;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private syncedResolve!: () => void;
  readonly synced: Promise<void>;
  hasSynced = false;
  /** Counts of lists (initial + re-lists), for tests and metrics. */
  lists = 0;
  /** Consecutive failed lists/watches: the retry delay doubles (0.5 s … 8 s, jittered). */
  private failures = 0;

  constructor(
    private readonly client: KubeClient,
    readonly options: InformerOptions,
  ) {
    this.synced = new Promise((r) => (this.syncedResolve = r));
  }

  get id(): string {
    return `${this.options.apiVersion}/${this.options.kind}${this.options.labelSelector ? `?l=${this.options.labelSelector}` : ''}${this.options.fieldSelector ? `?f=${this.options.fieldSelector}` : ''}`;
  }

  on(handler: InformerHandler): void {
    this.handlers.push(handler);
  }

  get(namespace: string | undefined, name: string): CachedObject | undefined {
    return this.store.get(namespace ? `${namespace}/${name}` : name);
  }

  /** Objects labelled with a parent id (the index, not a scan). */
  byParentId(id: string): CachedObject[] {
    return [...(this.byParent.get(id) ?? [])].map((k) => this.store.get(k)!).filter(Boolean);
  }

  /** Adds a secondary index (e.g. Instances by Template); add before `start()`. */
  addIndex(name: string, fn: (o: CachedObject) => string[]): void {
    this.indexers.set(name, { fn, map: new Map() });
  }

  byIndex(name: string, value: string): CachedObject[] {
    const idx = this.indexers.get(name);
    if (!idx) throw new Error(`no index ${name} on ${this.id}`);
    return [...(idx.map.get(value) ?? [])].map((k) => this.store.get(k)!).filter(Boolean);
  }

  list(): CachedObject[] {
    return [...this.store.values()];
  }

  start(): void {
    void this.relist('initial');
  }

  stop(): void {
    this.stopped = true;
    this.watchHandle?.stop();
    if (this.retry) clearTimeout(this.retry);
  }

  /** Test hook: forget the watch and resume from a given (e.g. expired) resourceVersion. */
  restartWatchFrom(resourceVersion: string): void {
    this.resourceVersion = resourceVersion;
    const h = this.watchHandle;
    this.watchHandle = undefined;
    h?.stop();
    this.startWatch();
  }

  /** Exponential, jittered, at least the server's Retry-After: informers don't retry in lockstep. */
  private retryDelay(err?: unknown): number {
    const n = this.failures++;
    const retryAfter = err instanceof KubeApiError ? (err.retryAfterMs ?? 0) : 0;
    return Math.max(retryAfter, jitter(Math.min(8000, 500 * 2 ** n), 0.5));
  }

  private collectionPath(): string {
    return this.client.path(this.options.apiVersion, this.options.kind);
  }

  private async relist(reason: 'initial' | 'gone' | 'error'): Promise<void> {
    if (this.stopped) return;
    try {
      const items: CachedObject[] = [];
      let cont: string | undefined;
      let rv = '';
      do {
        const page = await this.client.request<{ metadata: { resourceVersion: string; continue?: string }; items: CachedObject[] }>('GET', this.collectionPath(), {
          query: { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, limit: 500, continue: cont },
        });
        const apiVersion = this.options.apiVersion;
        for (const it of page.items) items.push(slim({ ...it, apiVersion, kind: this.options.kind }));
        cont = page.metadata.continue || undefined;
        rv = page.metadata.resourceVersion;
      } while (cont);
      this.lists++;
      this.failures = 0;
      this.replace(items);
      this.resourceVersion = rv;
      this.options.onList?.(reason);
      if (!this.hasSynced) {
        this.hasSynced = true;
        this.syncedResolve();
      }
      this.startWatch();
    } catch (e) {
      this.options.onError?.(e as Error);
      this.retry = setTimeout(() => void this.relist('error'), this.retryDelay(e));
    }
  }

  private startWatch(): void {
    if (this.stopped) return;
    this.watchHandle = this.client.watch(
      this.collectionPath(),
      {
        labelSelector: this.options.labelSelector,
        fieldSelector: this.options.fieldSelector,
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: 240 + Math.floor(Math.random() * 60),
      },
      (e) => this.onWatchEvent(e),
      (err) => {
        if (this.stopped) return;
        const handle = this.watchHandle;
        if (!handle) return; // replaced by restartWatchFrom
        this.watchHandle = undefined;
        if (err instanceof KubeApiError && err.code === 410) {
          void this.relist('gone');
        } else if (err === GONE) {
          void this.relist('gone');
        } else {
          if (err) this.options.onError?.(err);
          this.retry = setTimeout(() => this.startWatch(), err ? this.retryDelay(err) : 0);
        }
      },
    );
  }

  private onWatchEvent(e: { type: string; object: any }): void {
    if (e.type === 'ERROR') {
      // `410 Gone` inside the stream: the resourceVersion is too old, re-list.
      const code = e.object?.code;
      const h = this.watchHandle;
      this.watchHandle = undefined;
      h?.stop();
      if (code === 410) void this.relist('gone');
      else {
        this.options.onError?.(new Error(`watch ${this.id}: ${e.object?.message ?? 'error event'}`));
        this.retry = setTimeout(() => void this.relist('error'), this.retryDelay());
      }
      return;
    }
    const obj = slim({ ...e.object, apiVersion: this.options.apiVersion, kind: this.options.kind } as CachedObject);
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    this.failures = 0;
    if (e.type === 'BOOKMARK') return;
    const key = cacheKey(obj);
    const old = this.store.get(key);
    if (e.type === 'DELETED') {
      this.delete(key);
      this.emit('delete', obj);
    } else {
      this.put(key, obj);
      this.emit(old ? 'update' : 'add', obj, old);
    }
  }

  private replace(items: CachedObject[]): void {
    const seen = new Set<string>();
    for (const obj of items) {
      const key = cacheKey(obj);
      seen.add(key);
      const old = this.store.get(key);
      this.put(key, obj);
      if (!old) this.emit('add', obj);
      else if (old.metadata.resourceVersion !== obj.metadata.resourceVersion) this.emit('update', obj, old);
    }
    for (const [key, obj] of [...this.store]) {
      if (!seen.has(key)) {
        this.delete(key);
        this.emit('delete', obj);
      }
    }
  }

  private put(key: string, obj: CachedObject): void {
    const old = this.store.get(key);
    const oldId = old?.metadata.labels?.[COMPOSER.parentIdLabel];
    if (oldId) this.byParent.get(oldId)?.delete(key);
    if (old) this.unindex(key, old);
    this.store.set(key, obj);
    for (const { fn, map } of this.indexers.values()) {
      for (const v of fn(obj)) {
        let set = map.get(v);
        if (!set) map.set(v, (set = new Set()));
        set.add(key);
      }
    }
    const id = obj.metadata.labels?.[COMPOSER.parentIdLabel];
    if (id) {
      let set = this.byParent.get(id);
      if (!set) this.byParent.set(id, (set = new Set()));
      set.add(key);
    }
  }

  private unindex(key: string, old: CachedObject): void {
    for (const { fn, map } of this.indexers.values()) {
      for (const v of fn(old)) {
        const set = map.get(v);
        set?.delete(key);
        if (set?.size === 0) map.delete(v);
      }
    }
  }

  private delete(key: string): void {
    const old = this.store.get(key);
    const id = old?.metadata.labels?.[COMPOSER.parentIdLabel];
    if (id) this.byParent.get(id)?.delete(key);
    if (old) this.unindex(key, old);
    this.store.delete(key);
  }

  private emit(type: InformerEvent, obj: CachedObject, old?: CachedObject): void {
    for (const h of this.handlers) {
      try {
        h(type, obj, old);
      } catch (e) {
        this.options.onError?.(e as Error);
      }
    }
  }
}

const GONE = new Error('gone');

/**
 * Drops `metadata.managedFields` (nothing here reads it; as controller-runtime's default cache
 * transform): it is often the larger part of a small object, and the caches hold every child.
 */
function slim(obj: CachedObject): CachedObject {
  if (obj.metadata && 'managedFields' in obj.metadata) delete obj.metadata.managedFields;
  return obj;
}
