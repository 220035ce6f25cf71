/**
 * A list+watch cache of one kind (optionally label/field selected): lists, then watches from the
 * list's resourceVersion, resumes from the last seen resourceVersion (bookmarks included) when a
 * watch ends, and re-lists when the server answers 410 Gone. Objects are indexed by the
 * composer parent-id label, so children are found by their parent without scanning.
 *
 * Read-your-writes: the server's answer to one of our writes (`noteWritten`, `noteDeleted`) is
 * what `get` returns until the watch delivers that very resourceVersion. So a reconcile that runs
 * right after our own write (before its watch event) neither repeats the write nor derives a
 * status from the older copy; and handlers are told when an event only echoes our write, also
 * when the echo comes before the answer (`write`).
 */
import { COMPOSER } from '../model/labels.ts';
import { jitter, KubeApiError, type KubeClient, type WatchHandle } from './client.ts';

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
/**
 * `own`: the event brings exactly what a write noted with `noteWritten`/`noteDeleted` returned
 * (its echo), so the reconcile that wrote it has already seen it. Never set after a re-list.
 */
export type InformerHandler = (type: InformerEvent, obj: CachedObject, old: CachedObject | undefined, own: boolean) => void;

/** A write of ours whose watch event is still due. */
interface PendingWrite {
  /** The server's answer; null: we deleted the object. */
  obj: CachedObject | null;
  /** resourceVersions of our earlier writes to the object whose events are due too. */
  earlier: Set<string>;
  at: number;
}

/** A watch event (already in the cache) whose handlers wait for the answer to a write of ours. */
interface HeldEvent {
  type: InformerEvent;
  obj: CachedObject;
  old: CachedObject | undefined;
  own: boolean;
}

/** How long an answer stands in for the watch (a watch that lags longer: the cache is used again). */
export const PENDING_WRITE_TTL_MS = 60_000;

export interface InformerOptions {
  apiVersion: string;
  kind: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Called when a list or watch fails (logged by the owner). */
  onError?: (err: Error) => void;
  /** Called after every (re-)list, with the reason. */
  onList?: (reason: 'initial' | 'gone' | 'error') => void;
  /** What of an object the cache keeps (a projection of the fields read), after managedFields are dropped. */
  transform?: (obj: CachedObject) => CachedObject;
  /**
   * Which objects the cache keeps (after `transform`): one refused is as if the server had none,
   * so its events are never handed on (one that stops being accepted is a delete).
   * @default every object
   */
  accept?: (obj: CachedObject) => boolean;
  /**
   * Objects per list page: a page is read whole before `transform`, so kinds whose objects may
   * be large (a Secret may hold 1 MiB) list in small pages.
   * @default 500
   */
  pageSize?: number;
  /**
   * The kind's API may not be served (an optional peer's CRD, e.g. Gateway API's): while the list
   * answers 404 the cache is synced and empty, and the list is tried again every
   * OPTIONAL_KIND_RECHECK_MS, so a CRD installed later is picked up.
   * @default false: a 404 is an error, retried with backoff, and the cache never syncs
   */
  optional?: boolean;
}

export const OPTIONAL_KIND_RECHECK_MS = 30_000;

export function cacheKey(obj: { metadata: { name: string; namespace?: string } }): string {
  return obj.metadata.namespace ? `${obj.metadata.namespace}/${obj.metadata.name}` : obj.metadata.name;
}

export class Informer {
  readonly store = new Map<string, CachedObject>();
  private readonly byParent = new Map<string, Set<string>>();
  private readonly indexers = new Map<string, { fn: (o: CachedObject) => string[]; map: Map<string, Set<string>> }>();
  private readonly handlers: InformerHandler[] = [];
  private readonly pending = new Map<string, PendingWrite>();
  /** Keys with writes of ours in flight (`write`): their events wait for the answers. */
  private readonly inFlight = new Map<string, { writes: number; answers: Set<string>; held: HeldEvent[] }>();
  private writesSinceSweep = 0;
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

  /** The cached object, or the server's answer to our later write (see the module comment). */
  get(namespace: string | undefined, name: string): CachedObject | undefined {
    const key = namespace ? `${namespace}/${name}` : name;
    const p = this.pendingOf(key);
    return p ? (p.obj ?? undefined) : this.store.get(key);
  }

  /** Objects labelled with a parent id (the index, not a scan), less those we just deleted. */
  byParentId(id: string): CachedObject[] {
    return [...(this.byParent.get(id) ?? [])].filter((k) => this.pendingOf(k)?.obj !== null).map((k) => this.store.get(k)!).filter(Boolean);
  }

  /**
   * Records the server's answer to a write of ours (apply, patch; a delete that left the object
   * terminating). Only the writer's own key may skip the echo (see `InformerHandler`), so only
   * writes made by the reconcile of the key that this informer's events enqueue are noted.
   */
  noteWritten(answer: CachedObject): void {
    const rv = answer.metadata?.resourceVersion;
    if (!rv || !this.selects(answer)) return;
    const obj = this.keep({ ...answer, apiVersion: this.options.apiVersion, kind: this.options.kind });
    if (!this.accepts(obj)) return;
    const key = cacheKey(obj);
    const prev = this.pendingOf(key);
    const cachedRv = this.store.get(key)?.metadata.resourceVersion;
    if (!prev && cachedRv === rv) return; // a no-op write
    // An answer processed after the watch already brought a later version (e.g. a PVC created,
    // then bound by kube-controller-manager before our apply's answer was read): its echo and the
    // later events are past, so it must not stand in for the newer cached object until the TTL.
    if (cachedRv && newerResourceVersion(cachedRv, rv)) return;
    const earlier = new Set(prev?.earlier);
    const prevRv = prev?.obj?.metadata.resourceVersion;
    if (prevRv && prevRv !== rv) earlier.add(prevRv);
    this.setPending(key, { obj, earlier, at: Date.now() });
  }

  /**
   * Sends a write of one object (`send`) and notes its answer. The watch may bring the write's
   * echo before the answer is read (they travel on different connections): the object's events
   * that come meanwhile enter the cache at once, but their handlers run once the answer is in,
   * and are told which one was the echo. `send` failing releases them as they are.
   */
  async write<T>(namespace: string | undefined, name: string, send: () => Promise<T>): Promise<T> {
    const key = namespace ? `${namespace}/${name}` : name;
    let w = this.inFlight.get(key);
    if (!w) this.inFlight.set(key, (w = { writes: 0, answers: new Set(), held: [] }));
    w.writes++;
    let answer: T | undefined;
    try {
      answer = await send();
      return answer;
    } finally {
      const written = answer as CachedObject | undefined;
      const rv = written?.metadata?.resourceVersion;
      if (rv) {
        this.noteWritten(written);
        w.answers.add(rv);
      }
      if (--w.writes === 0) {
        this.inFlight.delete(key);
        for (const e of w.held) this.emit(e.type, e.obj, e.old, e.own || (e.obj.metadata.resourceVersion !== undefined && w.answers.has(e.obj.metadata.resourceVersion)));
      }
    }
  }

  /** Records that we deleted an object (it is gone, not terminating). */
  noteDeleted(namespace: string | undefined, name: string): void {
    const key = namespace ? `${namespace}/${name}` : name;
    if (!this.store.has(key) && !this.pendingOf(key)) return;
    this.setPending(key, { obj: null, earlier: new Set(), at: Date.now() });
  }

  private setPending(key: string, p: PendingWrite): void {
    this.pending.set(key, p);
    if (++this.writesSinceSweep < 1000) return;
    // Answers whose echo never came (a watch down for long): dropped, not kept forever.
    this.writesSinceSweep = 0;
    for (const k of [...this.pending.keys()]) this.pendingOf(k);
  }

  private pendingOf(key: string): PendingWrite | undefined {
    const p = this.pending.get(key);
    if (p && Date.now() - p.at > PENDING_WRITE_TTL_MS) {
      this.pending.delete(key);
      return undefined;
    }
    return p;
  }

  /**
   * Whether a watch event echoes a pending write of ours, settling it: the echo of the last
   * write clears it, an echo of an earlier one keeps it, any other event (someone else's write)
   * drops it, so `get` falls back to the cache.
   */
  private settle(key: string, rv: string | undefined, deleted: boolean): boolean {
    const p = this.pendingOf(key);
    if (!p) return false;
    if (deleted || p.obj?.metadata.resourceVersion === rv) {
      this.pending.delete(key);
      return deleted ? p.obj === null : true;
    }
    if (rv !== undefined && p.earlier.delete(rv)) return true;
    this.pending.delete(key);
    return false;
  }

  /** Whether the object matches this informer's selector (the `k=v` and `k` forms we use). */
  private selects(obj: CachedObject): boolean {
    if (this.options.fieldSelector) return false;
    for (const term of (this.options.labelSelector ?? '').split(',').filter(Boolean)) {
      const [k, v] = term.split('=');
      const has = obj.metadata.labels?.[k];
      if (has === undefined || (v !== undefined && has !== v)) return false;
    }
    return true;
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

  private accepts(obj: CachedObject): boolean {
    return !this.options.accept || !obj.metadata || this.options.accept(obj);
  }

  private keep(obj: CachedObject): CachedObject {
    const slimmed = slim(obj);
    return this.options.transform && slimmed.metadata ? this.options.transform(slimmed) : slimmed;
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
          query: { labelSelector: this.options.labelSelector, fieldSelector: this.options.fieldSelector, limit: this.options.pageSize ?? 500, continue: cont },
        });
        const apiVersion = this.options.apiVersion;
        for (const it of page.items) {
          const kept = this.keep({ ...it, apiVersion, kind: this.options.kind });
          if (this.accepts(kept)) items.push(kept);
        }
        cont = page.metadata.continue || undefined;
        rv = page.metadata.resourceVersion;
      } while (cont);
      this.lists++;
      this.failures = 0;
      this.replace(items);
      this.resourceVersion = rv;
      this.options.onList?.(reason);
      this.markSynced();
      this.startWatch();
    } catch (e) {
      if (this.options.optional && e instanceof KubeApiError && e.code === 404) {
        this.failures = 0;
        this.replace([]);
        this.resourceVersion = '';
        this.markSynced();
        this.retry = setTimeout(() => void this.relist('error'), OPTIONAL_KIND_RECHECK_MS);
        return;
      }
      this.options.onError?.(e as Error);
      this.retry = setTimeout(() => void this.relist('error'), this.retryDelay(e));
    }
  }

  private markSynced(): void {
    if (this.hasSynced) return;
    this.hasSynced = true;
    this.syncedResolve();
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
    const obj = this.keep({ ...e.object, apiVersion: this.options.apiVersion, kind: this.options.kind } as CachedObject);
    if (obj.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion;
    this.failures = 0;
    if (e.type === 'BOOKMARK') return;
    const key = cacheKey(obj);
    const old = this.store.get(key);
    // Not accepted: never seen, or (a cached object relabelled) gone, as the cache held it.
    const refused = !this.accepts(obj);
    if (refused && !old) return;
    const deleted = e.type === 'DELETED' || refused;
    const own = !refused && this.settle(key, obj.metadata.resourceVersion, deleted);
    if (refused) this.pending.delete(key);
    const type = deleted ? 'delete' : old ? 'update' : 'add';
    if (type === 'delete') this.delete(key);
    else this.put(key, obj);
    const held = this.inFlight.get(key)?.held;
    const prev = type === 'delete' ? undefined : old;
    const seen = refused ? old! : obj;
    if (held) held.push({ type, obj: seen, old: prev, own });
    else this.emit(type, seen, prev, own);
  }

  private replace(items: CachedObject[]): void {
    // A list may predate a write of ours: its events are never echoes, and the cache is used.
    // Events still held for a write in flight are older than the list's: dropped, not handed over after it.
    this.pending.clear();
    for (const w of this.inFlight.values()) w.held.length = 0;
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

  private emit(type: InformerEvent, obj: CachedObject, old?: CachedObject, own = false): void {
    for (const h of this.handlers) {
      try {
        h(type, obj, old, own);
      } catch (e) {
        this.options.onError?.(e as Error);
      }
    }
  }
}

const GONE = new Error('gone');

/**
 * Whether resourceVersion `a` is later than `b`. Opaque to clients in general, but the API server
 * backed by etcd gives its revision, a decimal integer; any other form is never called newer.
 */
export function newerResourceVersion(a: string, b: string): boolean {
  const digits = /^[0-9]{1,30}$/;
  return digits.test(a) && digits.test(b) && BigInt(a) > BigInt(b);
}

/**
 * Drops `metadata.managedFields` (nothing here reads it; as controller-runtime's default cache
 * transform): it is often the larger part of a small object, and the caches hold every child.
 */
function slim(obj: CachedObject): CachedObject {
  if (obj.metadata && 'managedFields' in obj.metadata) delete obj.metadata.managedFields;
  return obj;
}
