// The real `crownlabs gitops --watch` process, driven from a test: start it, make changes, wait
// until it has handled them (its `watch:` log records, then a quiet period).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { listFiles } from '../../src/sinks/atomic-tree.ts';
import { BIN, ROOT } from './cli.ts';

export interface WatchProcess {
  /** Everything it wrote to stderr so far. */
  stderr(): string;
  /** How many `watch:` records it logged so far: pass it to settled() before a change. */
  records(): number;
  /** Resolves once a `watch:` record came after `since` and nothing more for `quietMs`, and it is not waiting on an emptied file. */
  settled(since: number, quietMs?: number, timeoutMs?: number): Promise<void>;
  waitFor(re: RegExp): Promise<void>;
  stop(): Promise<void>;
}

export function watchProcess(args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): WatchProcess {
  const child = spawn(process.execPath, [BIN, 'gitops', ...args, '--watch'], { cwd: opts.cwd ?? ROOT, env: { ...process.env, CI: 'true' } });
  const timeoutMs = opts.timeoutMs ?? 45_000;
  let stderr = '';
  let lastOutput = Date.now();
  let exited = false;
  const messages: string[] = [];
  let partial = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d;
    lastOutput = Date.now();
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const msg = (JSON.parse(line) as { msg?: string }).msg ?? '';
      if (msg.startsWith('watch: ')) messages.push(msg);
    }
  });
  const done = new Promise<void>((resolve) => child.on('exit', () => ((exited = true), resolve())));
  const poll = (ready: () => boolean, what: string, limit = timeoutMs) =>
    new Promise<void>((resolve, reject) => {
      const t0 = Date.now();
      const tick = () => {
        if (ready()) return resolve();
        if (exited) return reject(new Error(`gitops --watch exited while waiting for ${what}; stderr:\n${stderr}`));
        if (Date.now() - t0 > limit) return reject(new Error(`timeout waiting for ${what}; stderr:\n${stderr.slice(-4000)}`));
        setTimeout(tick, 20);
      };
      tick();
    });
  return {
    stderr: () => stderr,
    records: () => messages.length,
    settled: (since, quietMs = 400, limit = timeoutMs) => poll(() => messages.length > since && Date.now() - lastOutput >= quietMs && !/became empty/.test(messages.at(-1)!), `a watch update after record ${since}`, limit),
    waitFor: (re) => poll(() => re.test(stderr), String(re)),
    stop: async () => {
      if (!exited) child.kill('SIGTERM');
      await done;
    },
  };
}

/** A folder's files and their content (as `diff -r` sees it). */
export function folderFiles(dir: string): Map<string, string> {
  return new Map([...listFiles(dir)].sort().map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
}
