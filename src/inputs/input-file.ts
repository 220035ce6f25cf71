import { isUtf8 } from 'node:buffer';
import { closeSync, constants, fstatSync, openSync, readSync, type BigIntStats, type Stats } from 'node:fs';

/** Default of `inputMaxFileSize`: the most bytes one input file may hold. */
export const DEFAULT_MAX_FILE_BYTES = 16 * 1024 * 1024;

export interface ReadFailure {
  reason: 'missing' | 'not-regular' | 'too-large' | 'unreadable' | 'invalid-utf8';
  message: string;
  /** 1-based line of the problem, when it has one. */
  line?: number;
}

export type ReadResult = { ok: true; text: string } | ({ ok: false } & ReadFailure);

// O_NONBLOCK: opening a FIFO must not wait for a writer; the type is then checked on the open fd
// (no window between a check and the open). O_NOCTTY: a terminal device never becomes ours.
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const CHUNK = 64 * 1024;

/**
 * Reads one input file as UTF-8 text: only a regular file (a symbolic link is followed), at most
 * `maxBytes` bytes (`limitName` names that limit in messages). Anything else (FIFO, device,
 * socket, folder) is refused without reading it.
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
    return decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, total));
  } catch (err) {
    return { ok: false, reason: 'unreadable', message: `cannot read: ${(err as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/** `-f -`: the input is read from standard input, as kubectl does; messages call it `<stdin>`. */
export const STDIN_PATH = '-';
export const STDIN_NAME = '<stdin>';

/**
 * Reads standard input (until its end) as one input file, with the same limits: at most
 * `maxBytes` bytes (reading stops past them) and valid UTF-8.
 */
export async function readStdin(maxBytes = DEFAULT_MAX_FILE_BYTES, limitName = 'inputMaxFileSize', stream: NodeJS.ReadableStream = process.stdin): Promise<ReadResult> {
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of stream) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
      total += buf.length;
      if (total > maxBytes) {
        (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        return { ok: false, reason: 'too-large', message: tooLarge(undefined, maxBytes, limitName) };
      }
      chunks.push(buf);
    }
  } catch (err) {
    return { ok: false, reason: 'unreadable', message: `cannot read: ${(err as Error).message}` };
  }
  return decode(Buffer.concat(chunks, total));
}

function decode(bytes: Buffer): ReadResult {
  // Decoding would silently turn bad bytes into U+FFFD.
  if (!isUtf8(bytes)) {
    const offset = firstInvalidUtf8(bytes);
    return { ok: false, reason: 'invalid-utf8', line: lineAt(bytes, offset), message: `invalid UTF-8 at byte offset ${offset} (byte 0x${bytes[offset].toString(16).padStart(2, '0')})` };
  }
  return { ok: true, text: bytes.toString('utf8') };
}

/**
 * Offset of the first byte that does not start a well-formed UTF-8 sequence (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF, no truncated sequence); -1 if none.
 */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i];
    if (c < 0x80) {
      i++;
      continue;
    }
    const n = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
    if (n === 0 || i + n >= b.length) return i; // not a lead byte, or truncated
    // The second byte's range excludes overlong forms (E0, F0), surrogates (ED) and > U+10FFFF (F4).
    const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
    const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
    if (b[i + 1] < lo || b[i + 1] > hi) return i;
    for (let k = 2; k <= n; k++) if ((b[i + k] & 0xc0) !== 0x80) return i;
    i += n + 1;
  }
  return -1;
}

function lineAt(b: Uint8Array, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (b[i] === 0x0a) line++;
  return line;
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
