/**
 * `gitops --check`: how an output folder differs from the tree the input renders to, as a unified
 * diff (`a/` the folder, `b/` the rendered tree). As `crownlabs diff` (and kubectl) we run the
 * system's `diff` rather than a library: only the stale files are copied into a temporary folder
 * and one `diff -ruN` compares them; its output is then cut to a bounded size per file.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { listFiles } from '../sinks/atomic-tree.ts';

export interface TreeChanges {
  /** In both, with other content. */
  changed: string[];
  /** Rendered, not in the folder. */
  added: string[];
  /** In the folder, no longer rendered. */
  deleted: string[];
}

export function changeCount(c: TreeChanges): number {
  return c.changed.length + c.added.length + c.deleted.length;
}

/** Files that differ between the folder and what it should hold (a missing folder holds nothing). */
export function treeChanges(dir: string, files: ReadonlyMap<string, string>, same: ReadonlySet<string> = new Set()): TreeChanges {
  const present = existsSync(dir) && statSync(dir).isDirectory() ? listFiles(dir) : new Set<string>();
  const out: TreeChanges = { changed: [], added: [], deleted: [] };
  for (const [rel, content] of files) {
    if (!present.has(rel)) out.added.push(rel);
    // `same`: read from the folder by this run already and found equal.
    else if (!same.has(rel) && readFileSync(join(dir, rel), 'utf8') !== content) out.changed.push(rel);
  }
  for (const rel of present) if (!files.has(rel)) out.deleted.push(rel);
  out.changed.sort();
  out.added.sort();
  out.deleted.sort();
  return out;
}

/** git status --short letters, one line per file, in path order. */
export function statusLines(c: TreeChanges): string[] {
  const rows: [string, string][] = [...c.changed.map((f) => ['M', f] as [string, string]), ...c.added.map((f) => ['A', f] as [string, string]), ...c.deleted.map((f) => ['D', f] as [string, string])];
  return rows.sort(([, a], [, b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([s, f]) => `${s} ${f}`);
}

export interface DiffLimits {
  /** Files whose diff is printed (the others are only named). */
  files: number;
  /** Lines of one file's diff after its `---`/`+++` header. */
  lines: number;
}

export const DEFAULT_DIFF_LIMITS: DiffLimits = { files: 20, lines: 60 };

/**
 * The unified diff of the stale files (at most `limits.files` of them, `limits.lines` lines each),
 * or an error when `diff` cannot be run. Paths in the headers are `a/<path>` and `b/<path>`.
 */
export async function treeDiff(dir: string, files: ReadonlyMap<string, string>, changes: TreeChanges, limits?: DiffLimits): Promise<{ text: string; shown: number; error?: string }> {
  const stale = [...changes.changed, ...changes.added, ...changes.deleted].sort();
  const shown = limits ? stale.slice(0, limits.files) : stale;
  if (shown.length === 0) return { text: '', shown: 0 };
  const added = new Set(changes.added);
  const tmp = mkdtempSync(join(tmpdir(), 'crownlabs-check-'));
  try {
    mkdirSync(join(tmp, 'a'));
    mkdirSync(join(tmp, 'b'));
    for (const rel of shown) {
      const content = files.get(rel);
      if (content !== undefined) {
        mkdirSync(dirname(join(tmp, 'b', rel)), { recursive: true });
        writeFileSync(join(tmp, 'b', rel), content, { mode: 0o600 });
      }
      if (!added.has(rel)) {
        mkdirSync(dirname(join(tmp, 'a', rel)), { recursive: true });
        copyFileSync(join(dir, rel), join(tmp, 'a', rel));
      }
    }
    const run = await new Promise<{ out: string; code: number | string }>((resolve) => {
      const chunks: Buffer[] = [];
      // LC_ALL=C: the same output whatever the operator's locale.
      const child = spawn('diff', ['-ruN', 'a', 'b'], { cwd: tmp, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LC_ALL: 'C' } });
      child.stdout.on('data', (d: Buffer) => chunks.push(d));
      child.on('error', (e) => resolve({ out: '', code: `cannot run diff: ${e.message} (install diffutils to see the content of the changes)` }));
      child.on('close', (c, signal) => resolve({ out: Buffer.concat(chunks).toString('utf8'), code: c ?? `diff ended by ${signal}` }));
    });
    // diff: 0 same, 1 different, 2 trouble.
    if (typeof run.code === 'string') return { text: '', shown: 0, error: run.code };
    if (run.code > 1) return { text: '', shown: 0, error: `diff exited with ${run.code}` };
    return { text: boundDiff(run.out, limits?.lines), shown: shown.length };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `diff -ruN` output with its per-file `diff …` command lines dropped, the timestamps of the
 * `---`/`+++` headers dropped, and each file's hunks cut after `maxLines` lines.
 */
export function boundDiff(out: string, maxLines?: number): string {
  const lines = out.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const result: string[] = [];
  let header = 0;
  let body = 0;
  let hidden = 0;
  const flush = () => {
    if (hidden > 0) result.push(`… ${hidden} more line(s) of this file's diff (--full-diff prints them)`);
    hidden = 0;
    body = 0;
  };
  for (const line of lines) {
    // A hunk line starts with ' ', '+', '-', '@' or '\': a line starting with "diff " begins a file.
    if (line.startsWith('diff ')) {
      flush();
      header = 2;
      continue;
    }
    if (header > 0 && (line.startsWith('--- ') || line.startsWith('+++ '))) {
      header--;
      result.push(line.replace(/\t.*$/, ''));
      continue;
    }
    header = 0;
    if (maxLines !== undefined && body >= maxLines) hidden++;
    else result.push(line);
    body++;
  }
  flush();
  return result.length > 0 ? `${result.join('\n')}\n` : '';
}

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
