/**
 * A de-duplicating work queue keyed by parent (`Instance/ns/name`, `Tenant/name`, `Workspace/name`):
 * a key is never processed by two workers at once, a key added while processing is processed again
 * afterwards, and a failing key is retried with per-key exponential back-off, jittered (so parents
 * failing together, e.g. during an API server outage, don't retry in lockstep) and never sooner
 * than the server's `Retry-After`. A key waiting on a timer keeps its earliest due time.
 *
 * A key may be added "light" (`addLight`: e.g. only a child's status changed, so recomputing the
 * parent's status is enough): its run is light only when every add since its last start was.
 * Timers (back-off, periodic requeues) add it in full.
 *
 * A key whose run threw a `TerminalError` is not retried at all (see terminal-error.ts).
 */
import { isTerminal } from './terminal-error.ts';

export interface WorkQueueOptions {
  workers: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Share of a back-off added at random (default 0.2). */
  jitter?: number;
  random?: () => number;
}

/** setTimeout's largest delay (a signed 32-bit number of milliseconds). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export type ProcessResult = { requeueAfterMs?: number } | void;

export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly queued = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly dirty = new Set<string>();
  /** Keys with a full (not light) add since their last start. */
  private readonly full = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; due: number }>();
  private readonly wake: (() => void)[] = [];
  private stopped = false;
  private running: Promise<void>[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: WorkQueueOptions) {}

  get depth(): number {
    return this.queue.length;
  }

  add(key: string): void {
    if (this.stopped) return;
    this.full.add(key);
    this.enqueue(key);
  }

  /** Adds `key` for a light run (see the class comment); a pending full add keeps it full. */
  addLight(key: string): void {
    if (this.stopped) return;
    this.enqueue(key);
  }

  private enqueue(key: string): void {
    if (this.processing.has(key)) {
      this.dirty.add(key);
      return;
    }
    if (this.queued.has(key)) return;
    this.queued.add(key);
    this.queue.push(key);
    this.wake.shift()?.();
  }

  /**
   * Adds `key` after `delayMs`, unless it is already due sooner (a reconcile is level-based: an
   * early run just computes the rest again). Delays beyond what a Node timer holds (~24.8 days)
   * fire at that limit.
   */
  addAfter(key: string, delayMs: number): void {
    if (this.stopped) return;
    const due = Date.now() + delayMs;
    const prev = this.timers.get(key);
    if (prev && prev.due <= due) return;
    if (prev) clearTimeout(prev.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, Math.min(Math.max(0, delayMs), MAX_TIMER_MS));
    this.timers.set(key, { timer, due });
  }

  /** Cancels the key's pending delayed add, if any (e.g. its object was deleted). */
  cancelAfter(key: string): void {
    const prev = this.timers.get(key);
    if (prev) clearTimeout(prev.timer);
    this.timers.delete(key);
  }

  /** Whether a delayed add of `key` is pending (tests, introspection). */
  hasDelayed(key: string): boolean {
    return this.timers.has(key);
  }

  /** Keys waiting on a timer (back-off or periodic resync). */
  get waiting(): number {
    return this.timers.size;
  }

  /** Back-off delay of the n-th consecutive failure of a key: base·2ⁿ⁻¹, jittered, capped. */
  backoff(key: string, retryAfterMs = 0): number {
    const n = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, n);
    const exp = (this.options.baseDelayMs ?? 100) * 2 ** (n - 1);
    const jittered = Math.round(exp * (1 + (this.options.jitter ?? 0.2) * (this.options.random ?? Math.random)()));
    return Math.max(retryAfterMs, Math.min(this.options.maxDelayMs ?? 300_000, jittered));
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  /** Starts N workers; each runs `process` for one key at a time (`light`: see the class comment). */
  run(process: (key: string, light: boolean) => Promise<ProcessResult>, onError: (key: string, err: unknown) => void): void {
    for (let i = 0; i < this.options.workers; i++) this.running.push(this.worker(process, onError));
  }

  /** Resolves when the queue is empty and no key is being processed or waiting on a timer. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  isIdle(): boolean {
    return this.queue.length === 0 && this.processing.size === 0;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    this.queue.length = 0;
    this.queued.clear();
    this.full.clear();
    for (const w of this.wake.splice(0)) w();
    await Promise.all(this.running);
  }

  private clearTimer(key: string): void {
    const t = this.timers.get(key);
    if (t) clearTimeout(t.timer);
    this.timers.delete(key);
  }

  private async next(): Promise<string | undefined> {
    while (!this.stopped) {
      const key = this.queue.shift();
      if (key !== undefined) {
        this.queued.delete(key);
        return key;
      }
      await new Promise<void>((r) => this.wake.push(r));
    }
    return undefined;
  }

  private async worker(process: (key: string, light: boolean) => Promise<ProcessResult>, onError: (key: string, err: unknown) => void): Promise<void> {
    for (;;) {
      const key = await this.next();
      if (key === undefined) return;
      this.processing.add(key);
      // Decided as the run starts: a full add that came while it waited makes it full.
      const light = !this.full.delete(key);
      try {
        const result = await process(key, light);
        this.forget(key);
        if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      } catch (err) {
        onError(key, err);
        if (isTerminal(err)) {
          // Not retried (no back-off loop); a later add (a watch event) runs it again.
          this.forget(key);
          this.clearTimer(key);
          continue;
        }
        // A retry already scheduled sooner (e.g. a periodic resync) must not pre-empt the back-off.
        this.clearTimer(key);
        this.addAfter(key, this.backoff(key, (err as { retryAfterMs?: number } | undefined)?.retryAfterMs));
      } finally {
        this.processing.delete(key);
        // Re-run for adds during the run; light unless one of them was full.
        if (this.dirty.delete(key)) this.enqueue(key);
        if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }
}
