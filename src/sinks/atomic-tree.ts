import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

export interface TreeWriteResult {
  written: number;
  unchanged: number;
  removed: number;
}

/**
 * Replaces folder `dir` with exactly `files` (relative path → content), so that a reader never sees
 * half a tree: the new tree is built beside it and swapped in with renames. Files whose content did
 * not change are hard-linked from the old tree (same inode and mtime), so tools that watch the
 * folder, and git, see only real changes. If anything fails before the swap, `dir` is untouched.
 */
export function writeTreeAtomically(dir: string, files: ReadonlyMap<string, string>): TreeWriteResult {
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true });
  const stamp = `${process.pid}-${Date.now()}`;
  const staging = join(parent, `.${basename(dir)}.new-${stamp}`);
  const retired = join(parent, `.${basename(dir)}.old-${stamp}`);
  const old = existsSync(dir) ? listFiles(dir) : new Set<string>();
  const result: TreeWriteResult = { written: 0, unchanged: 0, removed: 0 };
  try {
    for (const [rel, content] of files) {
      const target = join(staging, rel);
      mkdirSync(dirname(target), { recursive: true });
      const previous = join(dir, rel);
      if (old.has(rel) && sameContent(previous, content)) {
        linkSync(previous, target);
        result.unchanged++;
      } else {
        writeFileSync(target, content);
        result.written++;
      }
    }
    if (files.size === 0) mkdirSync(staging, { recursive: true });
    for (const rel of old) if (!files.has(rel)) result.removed++;
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  if (existsSync(dir)) renameSync(dir, retired);
  renameSync(staging, dir);
  rmSync(retired, { recursive: true, force: true });
  return result;
}

/** Relative paths of the regular files below `dir`. */
export function listFiles(dir: string): Set<string> {
  const out = new Set<string>();
  const walk = (rel: string) => {
    for (const entry of readdirSync(join(dir, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(r);
      else if (entry.isFile()) out.add(r);
    }
  };
  walk('');
  return out;
}

function sameContent(path: string, content: string): boolean {
  try {
    return statSync(path).size === Buffer.byteLength(content) && readFileSync(path, 'utf8') === content;
  } catch {
    return false;
  }
}
