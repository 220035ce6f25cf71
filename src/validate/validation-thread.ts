import { Worker } from 'node:worker_threads';
import { VALIDATE_WORKER_ENTRY } from '../runtime/bundle.mjs';
import { workerScript } from '../sinks/parallel/worker-script.ts';
import type { CompileTiming, RenderedObjectIssues } from './validator.ts';

/** Sets sent to the thread: their objects' JSON text, from set index `start` on. */
export interface ValidationBatch {
  start: number;
  sets: string[];
}

export type ValidationReply = { start: number; issues: RenderedObjectIssues[][] } | { done: true; ms: number; timings: CompileTiming[] };

/** Sets a batch carries. */
const BATCH = 16;

/**
 * `validate`'s schema check on a second thread (./validate-worker.ts), while this one renders:
 * each set's objects go over as JSON text, the form a sink writes and the validator checks (it
 * round-trips through JSON any object that is not plain JSON already), and come back as issues.
 * The thread loads its validator while this one parses and composes.
 */
export class ValidationThread {
  private readonly results: RenderedObjectIssues[][] = [];
  private pending: string[] = [];
  private sent = 0;
  private readonly finished: Promise<{ ms: number; timings: CompileTiming[] }>;

  private constructor(private readonly worker: Worker) {
    this.finished = new Promise((resolve, reject) => {
      worker.on('message', (m: ValidationReply) => {
        if ('done' in m) resolve(m);
        else m.issues.forEach((issues, i) => (this.results[m.start + i] = issues));
      });
      worker.on('error', reject);
      worker.on('exit', (code) => reject(new Error(`the validation thread exited with code ${code}`)));
    });
    // Until finish() is called, a failure is only recorded.
    this.finished.catch(() => {});
  }

  static async start(): Promise<ValidationThread> {
    const script = await workerScript(VALIDATE_WORKER_ENTRY);
    return new ValidationThread(new Worker(script.main, { workerData: { entry: script.entry }, execArgv: [] }));
  }

  /** Queues one set's objects (in set order: results come back by the index of this call). */
  add(objects: readonly unknown[]): void {
    this.pending.push(JSON.stringify(objects));
    if (this.pending.length >= BATCH) this.flush();
  }

  /** Every queued set's issues, in the order added, with the thread's validation time and schema timings. */
  async finish(): Promise<{ issues: RenderedObjectIssues[][]; ms: number; timings: CompileTiming[] }> {
    this.flush();
    this.worker.postMessage('end');
    try {
      const { ms, timings } = await this.finished;
      return { issues: this.results, ms, timings };
    } finally {
      void this.worker.terminate();
    }
  }

  /** Stops the thread (the command ends without its results). */
  stop(): void {
    void this.worker.terminate();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.worker.postMessage({ start: this.sent, sets: this.pending } satisfies ValidationBatch);
    this.sent += this.pending.length;
    this.pending = [];
  }
}
