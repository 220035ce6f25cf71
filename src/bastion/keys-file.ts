import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Default location, the sidecar's view of the emptyDir shared with sshd (docs/behaviour.md §2.3). */
export const DEFAULT_AUTHORIZED_KEYS_PATH = '/auth-keys-vol/authorized_keys';

/** The file's text; '' when it does not exist yet. Any other read error is thrown (the event is retried). */
export async function readKeysFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/**
 * Replaces the file atomically: a temporary file in the same folder, then rename — sshd reading
 * it at any moment sees the old or the new keys, never a truncated file (upstream truncates and
 * writes in place). Mode 0644: sshd reads it as user bastion.
 */
export async function writeKeysFileAtomically(path: string, text: string): Promise<void> {
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, text, { mode: 0o644 });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}
