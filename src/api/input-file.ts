import { closeSync, constants, fstatSync, openSync, readSync, type BigIntStats, type Stats } from 'node:fs';

/** Default of `inputMaxFileSize`: the most bytes one input file may hold. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

export interface ReadFailure {
  reason: 'missing' | 'not-regular' | 'too-large' | 'unreadable';
  message: string;
}

export type ReadResult = { ok: true; text: string } | ({ ok: false } & ReadFailure);

// O_NONBLOCK: opening a FIFO must not wait for a writer; the type is then checked on the open fd
// (no window between a check and the open). O_NOCTTY: a terminal device never becomes ours.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const CHUNK = 64 * 1024;

/**
 * Reads one input file as text: only a regular file (a symbolic link is followed), at most
 * `maxBytes` bytes (`limitName` names that limit in messages). Anything else (FIFO, device, socket, folder) is refused without reading it.
 */
export function readInputFile(path: string, maxBytes = DEFAULT_MAX_FILE_BYTES, limitName = 'inputMaxFileSize'): ReadResult {
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (err) {
    return { ok: false, ...openFailure(err as NodeJS.ErrnoException) };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: 'not-regular', message: `not a regular file (${fileType(st)}): not read` };
    if (st.size > maxBytes) return { ok: false, reason: 'too-large', message: tooLarge(st.size, maxBytes, limitName) };
    // The size may change while reading (or be 0, as in /proc): read until EOF, one byte past the cap.
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(Math.max(st.size - total + 1, CHUNK), maxBytes + 1 - total));
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      chunks.push(n === buf.length ? buf : buf.subarray(0, n));
      total += n;
      if (total > maxBytes) return { ok: false, reason: 'too-large', message: tooLarge(undefined, maxBytes, limitName) };
    }
    const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total);
    return { ok: true, text: bytes.toString('utf8') };
  } catch (err) {
    return { ok: false, reason: 'unreadable', message: `cannot read: ${(err as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

function tooLarge(size: number | undefined, maxBytes: number, limitName: string): string {
  return `has ${size === undefined ? 'more' : `${size} bytes, more`} than ${limitName} (${maxBytes} bytes): not read`;
}

function openFailure(err: NodeJS.ErrnoException): ReadFailure {
  switch (err.code) {
    case 'ENOENT':
      return { reason: 'missing', message: 'no such file or folder' };
    case 'ELOOP':
      return { reason: 'unreadable', message: 'symbolic link loop: not read' };
    case 'ENXIO':
      // A socket, or a device with nothing behind it, cannot be opened.
      return { reason: 'not-regular', message: 'not a regular file: not read' };
    default:
      return { reason: 'unreadable', message: `cannot read: ${err.message}` };
  }
}

/** What kind of file system object `st` describes, in words. */
export function fileType(st: Stats | BigIntStats): string {
  if (st.isFile()) return 'regular file';
  if (st.isDirectory()) return 'folder';
  if (st.isFIFO()) return 'FIFO';
  if (st.isCharacterDevice()) return 'character device';
  if (st.isBlockDevice()) return 'block device';
  if (st.isSocket()) return 'socket';
  return 'special file';
}
