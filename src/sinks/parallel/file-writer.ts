import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';

/*
 * Creating a file costs the kernel 20–300 µs on this project's machines (ext4, varying from minute
 * to minute: a gitops tree's 25k files 0.5–7 s of system time), at the slow end more than rendering
 * its object. A second thread writing them while this thread still renders takes that time off the
 * wall clock (docs/benchmarks.md). The worker only creates folders and writes bytes it is given: no module of
 * ours runs in it, so it starts in ~30 ms whatever loads the main thread (bundle or sources).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { mkdirSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
const state = new Int32Array(workerData.state);
const made = new Set();
let failed = false;
parentPort.on('message', (m) => {
  if (m === 'end') {
    Atomics.store(state, 1, failed ? 2 : 1);
    Atomics.notify(state, 1);
    parentPort.close();
    return;
  }
  if (failed) return;
  try {
    for (let i = 0; i < m.paths.length; i++) {
      const dir = dirname(m.paths[i]);
      if (!made.has(dir)) { mkdirSync(dir, { recursive: true }); made.add(dir); }
      writeFileSync(m.paths[i], m.contents[i]);
      Atomics.add(state, 0, 1);
    }
  } catch (err) {
    failed = true;
    workerData.errors.postMessage({ message: String(err && err.message), code: err && err.code, syscall: err && err.syscall, path: err && err.path });
  }
});
`;

/** Files a batch carries to the worker, and how many it may have waiting (bounds the copies in flight). */
const BATCH = 32;
const AHEAD = 4 * BATCH;
/** Files queued here at most: beyond, the worker is behind and this thread writes too (bounds the texts held). */
const BACKLOG = 1024;
/** Without progress for this long the worker is taken for dead. */
const STALL_MS = 30_000;

/** From this many files to write a writer thread pays off (CROWNLABS_PARALLEL_WRITES; 0: never). */
export function parallelWritesFrom(): number {
  const v = process.env.CROWNLABS_PARALLEL_WRITES;
  const n = v === undefined || v === '' ? 512 : Number(v);
  return Number.isInteger(n) && n >= 0 ? n : 512;
}

/**
 * Writes files on this thread and a writer thread: `queue()` hands files over as they come (the
 * worker writes while this thread goes on), `finish()` writes the rest from the back of the queue
 * while the worker takes batches from the front, waits for it, and returns once every file is
 * written; folders are made as needed. A text handed to the worker is dropped here (the caller
 * need not keep it either: a large tree's text is not held twice); when the worker falls behind
 * by BACKLOG files, queue() writes the file itself, so the texts waiting stay few. The first error of either
 * thread is thrown by finish(), with its `code`, as writeFileSync would throw it. Synchronous to
 * its callers: finish() blocks on shared memory, not on this thread's event loop.
 */
export class ParallelFileWriter {
  private readonly worker: Worker;
  /** [0]: files the worker wrote; [1]: 0 working, 1 done, 2 failed. */
  private readonly state = new Int32Array(new SharedArrayBuffer(8));
  private readonly errors = new MessageChannel();
  private readonly paths: string[] = [];
  private readonly contents: (string | undefined)[] = [];
  /** Files before this index went to the worker. */
  private posted = 0;
  private readonly made = new Set<string>();
  private ended = false;
  /** The first error of a write done by queue(), thrown by finish(). */
  private failure?: unknown;

  constructor() {
    const errors = this.errors.port2;
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { state: this.state.buffer, errors },
      transferList: [errors],
      execArgv: [],
      // Its young generation holds a few batches of text at a time.
      resourceLimits: { maxYoungGenerationSizeMb: 1 },
    });
    // Never keeps the process alive; its failures are read in finish().
    this.worker.unref();
    this.errors.port1.unref();
    this.worker.on('error', () => {});
  }

  queue(path: string, content: string): void {
    if (this.paths.length - this.posted >= BACKLOG) {
      try {
        if (this.failure === undefined) this.writeFile(path, content);
      } catch (err) {
        this.failure = err;
      }
      return;
    }
    this.paths.push(path);
    this.contents.push(content);
    if (this.paths.length - this.posted >= BATCH && this.waiting() < AHEAD) this.post(this.paths.length);
  }

  finish(): void {
    let back = this.paths.length;
    try {
      while (this.posted < back) {
        if (this.waiting() < AHEAD) this.post(Math.min(back, this.posted + BATCH));
        else this.write(--back);
      }
    } finally {
      this.end();
    }
    this.awaitWorker();
    if (this.failure !== undefined) throw this.failure;
  }

  /** Ends the worker once it wrote what it was given (at most a few batches), so the caller can remove its folder. */
  abort(): void {
    this.end();
    try {
      this.awaitWorker();
    } catch {
      // aborting: its error is not the caller's
    }
  }

  private waiting(): number {
    return this.posted - Atomics.load(this.state, 0);
  }

  private post(to: number): void {
    this.worker.postMessage({ paths: this.paths.slice(this.posted, to), contents: this.contents.slice(this.posted, to) });
    this.contents.fill(undefined, this.posted, to);
    this.posted = to;
  }

  private write(i: number): void {
    this.writeFile(this.paths[i], this.contents[i]!);
    this.contents[i] = undefined;
  }

  private writeFile(path: string, content: string): void {
    const dir = dirname(path);
    if (!this.made.has(dir)) {
      mkdirSync(dir, { recursive: true });
      this.made.add(dir);
    }
    writeFileSync(path, content);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.worker.postMessage('end');
  }

  /** Returns once the worker wrote everything posted to it; throws its error. */
  private awaitWorker(): void {
    let seen = -1;
    while (Atomics.wait(this.state, 1, 0, STALL_MS) === 'timed-out') {
      const now = Atomics.load(this.state, 0);
      if (now === seen) {
        void this.worker.terminate();
        throw Object.assign(new Error(`the file writer thread made no progress for ${STALL_MS / 1000} s`), { code: 'ETIMEDOUT' });
      }
      seen = now;
    }
    if (Atomics.load(this.state, 1) === 1) return;
    const { message = 'the file writer thread failed', code = 'EIO', ...where } = (receiveMessageOnPort(this.errors.port1)?.message ?? {}) as { message?: string; code?: string; syscall?: string; path?: string };
    throw Object.assign(new Error(message), { code, ...where });
  }
}
