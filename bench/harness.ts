// What the controller benches share: the child process protocol (bench/controller-child.ts), CPU
// time from /proc, creating objects in parallel, waiting on the child's stats.
import { execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { rest, type KubeObject } from '../test/integration/cluster.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
/** CPU-seconds (user + system) a process has used, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  // Fields after the ")" closing the command name: state is field 3, utime 14, stime 15.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

export type Stats = { reconciledOk: number; requests: number; writes: number; reconciles: number; byKind: Record<string, number>; failed: number; instances: number; withStatus: number; cachedObjects: number; idle: boolean; rssMb: number; heapMb: number; heapTotalMb: number; externalMb: number; peakRssMb: number; prometheusRequests: number; activityChecked: number };

export function ask<T = { stats: Stats }>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve) => {
    const on = (m: { type: string }) => {
      if (m.type !== type) return;
      child.off('message', on);
      resolve(m as T);
    };
    child.on('message', on);
    child.send({ type });
  });
}

/** Creates objects with `concurrency` requests in flight. */
export async function createAll(objects: KubeObject[], concurrency = 32): Promise<void> {
  const c = rest();
  const queue = [...objects];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let o = queue.shift(); o; o = queue.shift()) {
        const p = await c.resourcePath(o.apiVersion, o.kind, o.metadata.namespace ?? null);
        await c.request('POST', p, { body: o });
      }
    }),
  );
}

export async function until(child: ChildProcess, done: (s: Stats) => boolean, timeoutMs: number, what: string): Promise<Stats> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stats } = await ask(child, 'stats');
    if (done(stats)) return stats;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(stats)}`);
    await sleep(250);
  }
}
