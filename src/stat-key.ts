import { statSync, type Stats } from 'node:fs';

/**
 * A file's identity as last written: size, mtime, ctime, inode, device. ctime cannot be set back,
 * so any write, rename or chmod since shows. Numbers, not bigints (half the cost at 25k files):
 * times keep sub-microsecond precision.
 */
export function statKey(st: Stats): string {
  return `${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino} ${st.dev}`;
}

/** The statKey of `file`, or empty when it cannot be stat'ed (gone, no access). */
export function statKeyOf(file: string): string {
  try {
    return statKey(statSync(file));
  } catch {
    return '';
  }
}
