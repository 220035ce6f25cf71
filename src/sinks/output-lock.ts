import { closeSync, linkSync, lstatSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { OutputError, type OutputTarget } from './output-guard.ts';

/*
 * One writer at a time per output: a lock file beside it (`.DIR.lock`, created with O_EXCL) holds
 * the writer's pid, host, command and start time. A run that finds it waits, saying who holds it,
 * and gives up after the timeout (an OutputError: exit 1). A lock whose process is gone (same host)
 * is stale and taken over. The lock is re-entrant within a process: a one-shot run holds it for the
 * whole run (render included: it compares against the folder it read), and the writes inside take
 * it again; a watch session only around each write.
 */

export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
  token: string;
}

export interface OutputLockSettings {
  /** How long a run waits for another one's lock before it fails (0: fails at once). */
  timeoutMs: number;
  /** Told once when a run starts waiting. */
  onWait: (message: string) => void;
}

export const DEFAULT_LOCK_TIMEOUT_S = 60;
const POLL_MS = 50;
/** A lock file still empty after this long lost its writer between create and write. */
const EMPTY_STALE_MS = 5_000;

const settings: OutputLockSettings = {
  timeoutMs: DEFAULT_LOCK_TIMEOUT_S * 1000,
  onWait: (message) => void process.stderr.write(message),
};

/** Sets how long runs wait for a lock (the CLI's --lock-timeout) and where the waiting message goes. */
export function configureOutputLock(s: Partial<OutputLockSettings>): void {
  Object.assign(settings, s);
}

/** Locks this process holds: path → how many times taken, and the token written in the file. */
const held = new Map<string, { count: number; token: string }>();
let seq = 0;
let exitHook = false;

export function lockPath(target: Pick<OutputTarget, 'parent' | 'base'>): string {
  return join(target.parent, `.${target.base}.lock`);
}

/** Takes the lock of `target` (waiting as configured) and returns its release. The parent folder must exist. */
export function holdOutputLock(target: OutputTarget): () => void {
  const path = lockPath(target);
  const mine = held.get(path);
  if (mine) {
    mine.count++;
    return once(() => release(path));
  }
  const token = randomUUID();
  const holder: LockHolder = { pid: process.pid, host: hostname(), command: commandLine(), since: new Date().toISOString(), token };
  const deadline = Date.now() + settings.timeoutMs;
  let told = false;
  for (;;) {
    if (tryCreate(path, holder)) break;
    const other = readHolder(path);
    if (other === 'gone') continue;
    if (isStale(path, other)) {
      removeStale(path, other);
      continue;
    }
    const who = describe(other, path);
    if (Date.now() >= deadline) {
      throw new OutputError(
        target.given,
        `is being written by another crownlabs run (${who}); gave up after ${settings.timeoutMs / 1000} s (--lock-timeout). Run again once it has finished; if no such process is running, remove ${path}`,
      );
    }
    if (!told) {
      told = true;
      settings.onWait(`${target.given}: waiting for another crownlabs run to finish writing it (${who}), at most ${settings.timeoutMs / 1000} s\n`);
    }
    sleep(POLL_MS);
  }
  held.set(path, { count: 1, token });
  if (!exitHook) {
    exitHook = true;
    // A run that ends (or exits on an error) leaves no lock; a killed one leaves a stale one, taken over.
    process.on('exit', () => {
      for (const p of [...held.keys()]) dropFile(p);
    });
  }
  return once(() => release(path));
}

/** Runs `fn` holding the lock of `target`. */
export function withOutputLock<T>(target: OutputTarget, fn: () => T): T {
  const release = holdOutputLock(target);
  try {
    return fn();
  } finally {
    release();
  }
}

/** Removes the lock of `target` when the run that took it is gone (what settling leftovers does for a killed run). */
export function clearStaleLock(target: OutputTarget): boolean {
  const path = lockPath(target);
  const holder = readHolder(path);
  if (holder === 'gone' || !isStale(path, holder)) return false;
  removeStale(path, holder);
  return true;
}

function release(path: string): void {
  const mine = held.get(path);
  if (!mine || --mine.count > 0) return;
  dropFile(path);
}

/** Removes the lock file if it is still ours (a stale-lock takeover may have replaced it). */
function dropFile(path: string): void {
  const mine = held.get(path);
  held.delete(path);
  const now = readHolder(path);
  if (mine && typeof now === 'object' && now.token === mine.token) {
    try {
      unlinkSync(path);
    } catch {
      // gone already
    }
  }
}

function tryCreate(path: string, holder: LockHolder): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeSync(fd, `${JSON.stringify(holder)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder written in the lock file; 'empty' when it holds nothing readable (yet); 'gone' when it was removed meanwhile. */
function readHolder(path: string): LockHolder | 'empty' | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw err;
  }
  try {
    const h = JSON.parse(text) as LockHolder;
    return typeof h.pid === 'number' && typeof h.host === 'string' ? h : 'empty';
  } catch {
    return 'empty';
  }
}

function isStale(path: string, holder: LockHolder | 'empty'): boolean {
  if (holder === 'empty') {
    try {
      return Date.now() - lstatSync(path).mtimeMs > EMPTY_STALE_MS;
    } catch {
      return false;
    }
  }
  // A lock of another host (a shared file system) cannot be checked: it is waited for, then named.
  return holder.host === hostname() && holder.pid !== process.pid && !alive(holder.pid);
}

/**
 * Removes a stale lock. Two runs may find the same stale lock: the file is moved aside first and
 * checked to be the stale one; a fresh lock moved aside by mistake is linked back.
 */
function removeStale(path: string, holder: LockHolder | 'empty'): void {
  const aside = `${path}.stale-${process.pid}-${seq++}`;
  try {
    renameSync(path, aside);
  } catch {
    return; // another run took it over first
  }
  const moved = readHolder(aside);
  const same = holder === 'empty' ? moved === 'empty' : typeof moved === 'object' && moved.token === holder.token && moved.pid === holder.pid;
  if (!same) {
    try {
      linkSync(aside, path);
    } catch {
      // a third run holds the lock now; the one moved aside lost it, as it would have on a timeout
    }
  }
  unlinkSync(aside);
}

function describe(holder: LockHolder | 'empty', path: string): string {
  if (holder === 'empty') return `lock file ${path}`;
  const host = holder.host === hostname() ? '' : ` on ${holder.host}`;
  return `pid ${holder.pid}${host}, ${holder.command}, since ${holder.since}; lock file ${path}`;
}

/** What the lock file says runs: the command and its mode, not its arguments (which may name anything). */
function commandLine(): string {
  const args = process.argv.slice(2);
  const words = ['crownlabs', ...args.slice(0, 1), ...args.filter((a) => a === '--watch')];
  return words.join(' ');
}

/** Whether process `pid` of this host still runs (EPERM: it does, as another user's). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
