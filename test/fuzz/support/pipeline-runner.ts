// Runs document cases in a child process (pipeline-worker.ts) with a time and memory limit per
// case: a case that hangs (an alias bomb, a FIFO, a loop) or exhausts memory is reported as a
// failure with its input, the child is killed, and the next case gets a fresh one.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../support/cli.ts';
import type { DocCase } from './doc-case.ts';
import type { CaseResult } from './pipeline.ts';
import type { CaseRequest } from './pipeline-worker.ts';
import { settings } from './settings.ts';

const WORKER = join(import.meta.dirname, 'pipeline-worker.ts');
/** Heap of the case worker: far above a normal case (~100 MB), far below the machine. */
const WORKER_HEAP_MB = 1024;
const STDERR_KEPT = 4096;

export class PipelineRunner {
  private child?: ChildProcess;
  private starting?: Promise<ChildProcess>;
  private stderr = '';
  private seq = 0;
  private readonly dir = mkdtempSync(join(tmpdir(), 'crownlabs-fuzz-'));

  private start(): Promise<ChildProcess> {
    this.starting ??= new Promise<ChildProcess>((resolve, reject) => {
      this.stderr = '';
      const child = fork(WORKER, [this.dir], {
        cwd: ROOT,
        execArgv: ['--import', 'tsx', `--max-old-space-size=${WORKER_HEAP_MB}`],
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      });
      child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-STDERR_KEPT)));
      // Loading the sources through tsx takes seconds on a busy machine: not part of any case.
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the case worker did not start in 180 s: ${this.stderr}`));
      }, 180_000);
      child.once('message', (m: { warm?: CaseResult }) => {
        clearTimeout(timer);
        // The unedited lab must pass every check, or the harness itself is wrong.
        if (m.warm && !m.warm.ok) {
          child.kill('SIGKILL');
          return reject(new Error(`the unedited base lab fails the checks: ${m.warm.failure}`));
        }
        this.child = child;
        resolve(child);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        if (this.child === child) this.child = undefined;
        this.starting = undefined;
        reject(new Error(`the case worker exited while starting (${code ?? signal}): ${this.stderr}`));
      });
    });
    return this.starting;
  }

  async run(kind: CaseRequest['kind'], c: DocCase): Promise<CaseResult> {
    const child = await this.start();
    const id = ++this.seq;
    return new Promise<CaseResult>((resolve) => {
      const done = (r: CaseResult) => {
        clearTimeout(timer);
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(r);
      };
      const onMessage = (m: { id?: number; result?: CaseResult }) => m.id === id && done(m.result!);
      const onExit = (code: number | null, signal: string | null) =>
        done({ ok: false, failure: `the case crashed its worker (exit ${code ?? signal}: out of memory at ${WORKER_HEAP_MB} MB, or a crash); its stderr ends:\n${this.stderr}` });
      const timer = setTimeout(() => {
        this.stop();
        done({ ok: false, failure: `hang: no answer in ${settings.caseTimeoutMs} ms (FUZZ_CASE_TIMEOUT_MS); the worker was killed` });
      }, settings.caseTimeoutMs);
      child.on('message', onMessage);
      child.once('exit', onExit);
      child.send({ id, kind, case: c } satisfies CaseRequest);
    });
  }

  /** Kills the worker (the next case starts a new one). */
  private stop(): void {
    const child = this.child;
    this.child = undefined;
    this.starting = undefined;
    child?.removeAllListeners('exit');
    child?.kill('SIGKILL');
  }

  close(): void {
    this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
