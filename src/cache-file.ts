import { closeSync, constants, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
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

/**
 * A cache file's content, or undefined when it is missing or not to be trusted: a cache decides
 * what a run renders and writes (a run record says "nothing to do"), so in a cache folder other users can
 * write to (a shared `CROWNLABS_CACHE_DIR`), a file planted by someone else must not be read. Only
 * a regular file (a symlink is not followed) owned by this user and writable by no one else is
 * read, as ssh reads its keys. Checked on the open file, so it cannot be swapped in between.
 */
export function readOwnCacheFile(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || (st.mode & 0o022) !== 0 || (process.getuid && st.uid !== process.getuid())) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
