import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { threadId } from 'node:worker_threads';

let written = 0;

/**
 * Replaces `file` by `content` through a temporary file beside it and a rename: a reader sees the
 * old file or the whole new one. The temporary name is unique per process, thread and write (render
 * threads and test workers share a pid). Throws when it cannot write; nothing is left behind then.
 * Used by every cache under `.cache/` (render, parse, run record, compiled schemas).
 */
export function writeFileAtomically(file: string, content: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}-${threadId}-${++written}`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}
