import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { statKey } from '../stat-key.ts';

/** Every regular file below `dir` (relative path → statKey); a link, device, FIFO or empty folder fails. */
export function treeStats(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    const entries = readdirSync(join(dir, rel), { withFileTypes: true });
    // An empty folder is not part of any tree crownlabs writes: whoever compares must not overlook it.
    if (rel && entries.length === 0) throw new Error(`${rel}: an empty folder`);
    for (const entry of entries) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(r);
      else if (entry.isFile()) out.set(r, statKey(statSync(join(dir, r))));
      else throw new Error(`${r}: not a regular file`);
    }
  };
  walk('');
  return out;
}

/** From this many files (as the last run wrote them) the walk on a second thread pays off: a gitops tree of 5k Instances (25k files), not a synth tree (6k: its walk costs what the thread's start-up does). */
export const BACKGROUND_WALK_FROM = 10_000;
/** The walking thread is taken for dead (and the walk done here) when it has not started after START_MS, or walked no folder for STALL_MS. */
const START_MS = 5_000;
const STALL_MS = 30_000;

/*
 * treeStats on a thread of its own: no module of ours runs in it, so it starts in ~30 ms whatever
 * loads the main thread. Paths and keys come back as one string, NUL-separated (no file name holds
 * a NUL). It must give what treeStats gives (a unit test compares them).
 */
const WALK_SOURCE = `
const { workerData } = require('node:worker_threads');
const { readdirSync, statSync } = require('node:fs');
const { join } = require('node:path');
const state = new Int32Array(workerData.state);
Atomics.add(state, 1, 1);
const parts = [];
const walk = (rel) => {
  const entries = readdirSync(join(workerData.dir, rel), { withFileTypes: true });
  if (rel && entries.length === 0) throw new Error(rel + ': an empty folder');
  for (const entry of entries) {
    const r = rel ? rel + '/' + entry.name : entry.name;
    if (entry.isDirectory()) walk(r);
    else if (entry.isFile()) {
      const st = statSync(join(workerData.dir, r));
      parts.push(r, st.size + ' ' + st.mtimeMs + ' ' + st.ctimeMs + ' ' + st.ino + ' ' + st.dev);
    } else throw new Error(r + ': not a regular file');
  }
  Atomics.add(state, 1, 1);
};
let message;
try {
  walk('');
  message = { text: parts.join('\\0') };
} catch (err) {
  message = { error: String(err && err.message) };
}
workerData.port.postMessage(message);
workerData.port.close();
Atomics.store(state, 0, 1);
Atomics.notify(state, 0);
`;

/**
 * treeStats(dir) started now on a second thread, so the caller's work goes on meanwhile:
 * result() returns (or throws) what treeStats would have at the time of the walk. Without a
 * thread to be had, or with one that stalls, result() walks on this thread.
 */
export class BackgroundTreeStats {
  /** [0]: 1 once the message is posted; [1]: 1 once the thread runs, plus the folders walked (progress). */
  private readonly state = new Int32Array(new SharedArrayBuffer(8));
  private readonly channel = new MessageChannel();
  private readonly worker?: Worker;
  private outcome?: { stats: Map<string, string> } | { error: Error };

  constructor(
    readonly dir: string,
    /** Tests: another thread's source, other time limits. */
    private readonly test: { source?: string; startMs?: number; stallMs?: number } = {},
  ) {
    try {
      this.worker = new Worker(test.source ?? WALK_SOURCE, {
        eval: true,
        workerData: { dir, state: this.state.buffer, port: this.channel.port2 },
        transferList: [this.channel.port2],
        execArgv: [],
      });
      // Never keeps the process alive; a failure shows as no answer (the walk is then done here).
      this.worker.unref();
      this.worker.on('error', () => {});
      this.channel.port1.unref();
    } catch {
      this.worker = undefined;
    }
  }

  result(): Map<string, string> {
    this.outcome ??= this.await();
    if ('error' in this.outcome) throw this.outcome.error;
    return this.outcome.stats;
  }

  private await(): { stats: Map<string, string> } | { error: Error } {
    const answer = this.worker && this.answer();
    if (answer === undefined) {
      try {
        return { stats: treeStats(this.dir) };
      } catch (err) {
        return { error: err as Error };
      }
    }
    if (answer.error !== undefined) return { error: new Error(answer.error) };
    const stats = new Map<string, string>();
    const parts = answer.text ? answer.text.split('\0') : [];
    for (let i = 0; i < parts.length; i += 2) stats.set(parts[i], parts[i + 1]);
    return { stats };
  }

  /** The thread's message; undefined when it did not start, died or stalled. */
  private answer(): { text?: string; error?: string } | undefined {
    // [1] is 1 once the thread runs, then counts the folders it walked.
    let seen = 0;
    let limit = this.test.startMs ?? START_MS;
    while (Atomics.wait(this.state, 0, 0, limit) === 'timed-out') {
      const now = Atomics.load(this.state, 1);
      if (now === seen) {
        void this.worker!.terminate();
        return undefined;
      }
      seen = now;
      limit = this.test.stallMs ?? STALL_MS;
    }
    return receiveMessageOnPort(this.channel.port1)?.message as { text?: string; error?: string } | undefined;
  }
}
