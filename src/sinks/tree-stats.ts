import { readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * A file's identity as a run wrote it: size, mtime, ctime, inode, device. ctime cannot be set back,
 * so any write, rename or chmod since shows. Numbers, not bigints (half the cost at 25k files):
 * times keep sub-microsecond precision.
 */
export function statKey(st: Stats): string {
  return `${st.size} ${st.mtimeMs} ${st.ctimeMs} ${st.ino} ${st.dev}`;
}

/** Every regular file below `dir` (relative path → statKey); a link, device, FIFO or empty folder fails. */
export function treeStats(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    const entries = readdirSync(join(dir, rel), { withFileTypes: true });
    // An empty folder is not part of any tree crownlabs writes: whoever compares must not overlook it.
    if (rel && entries.length === 0) throw new Error(`${rel}: an empty folder`);
    for (const entry of entries) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(r);
      else if (entry.isFile()) out.set(r, statKey(statSync(join(dir, r))));
      else throw new Error(`${r}: not a regular file`);
    }
  };
  walk('');
  return out;
}
