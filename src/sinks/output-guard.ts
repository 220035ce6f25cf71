import { closeSync, lstatSync, mkdirSync, openSync, readdirSync, readlinkSync, readSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, isAbsolute, join, parse, relative, resolve, sep } from 'node:path';
import { isOutputFolder, OUTPUT_MARKER } from '../output-marker.ts';

/** An output path crownlabs refuses, or could not write; the CLI reports it as `<path>: error: <message>`, exit 1. */
export class OutputError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'OutputError';
  }
}

/** Where an output goes, symlinks in its parents resolved: `path` = `parent`/`base`. */
export interface OutputTarget {
  /** As the user gave it (for messages). */
  given: string;
  path: string;
  parent: string;
  base: string;
}

/**
 * Checks an output folder before anything is rendered or written, and refuses (OutputError):
 * a symbolic link (it would be replaced by a folder), something that is not a folder, a folder that
 * overlaps an input (equals, contains or is inside an input path or the config file, real paths
 * compared), and a non-empty folder without the marker: crownlabs replaces only what it wrote.
 */
export function checkOutputFolder(dir: string, inputs: readonly string[] = []): OutputTarget {
  const target = outputTarget(dir);
  const st = lstatOrUndefined(target.path, dir);
  if (st?.isSymbolicLink()) throw symlinkError(dir, target.path, 'folder');
  if (st && !st.isDirectory()) throw new OutputError(dir, 'is not a folder (-o takes the folder to write)');
  checkOverlap(target, inputs);
  if (st) {
    let entries: string[];
    try {
      entries = readdirSync(target.path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new OutputError(dir, `cannot be read (${code ?? (err as Error).message}): crownlabs compares the folder with what it renders, so this user needs read and write access to it: fix its permissions (e.g. chmod u+rwx), or choose another output (-o)`);
    }
    if (entries.length > 0 && !isOutputFolder(target.path)) {
      const shown = entries.sort().slice(0, 3).join(', ') + (entries.length > 3 ? ', …' : '');
      throw new OutputError(
        dir,
        `holds files crownlabs did not write (${shown}) and no ${OUTPUT_MARKER} marker; crownlabs replaces its output folder whole, so it writes only into a missing or empty folder or one it wrote before. Choose another folder; if this is the output of an earlier crownlabs version, remove it first.`,
      );
    }
  }
  return target;
}

/** The same for a single output file (`manifests -o`): not a link, not a folder, no input; an existing file must start with `header`. */
export function checkOutputFile(file: string, header: string, inputs: readonly string[] = []): OutputTarget {
  const target = outputTarget(file);
  const st = lstatOrUndefined(target.path, file);
  if (st?.isSymbolicLink()) throw symlinkError(file, target.path, 'file');
  if (st?.isDirectory()) throw new OutputError(file, 'is a folder (-o takes the file to write)');
  if (st && !st.isFile()) throw new OutputError(file, 'is not a regular file');
  checkOverlap(target, inputs);
  if (st && st.size > 0 && !startsWith(target.path, header)) {
    throw new OutputError(file, `exists and was not written by crownlabs (its first line is not "${header.trimEnd()}"); choose another file, or remove it first.`);
  }
  return target;
}

/**
 * Creates the missing folders above an output one at a time (Node's recursive mkdir spins on /proc);
 * returns those it created, outermost first. Another run creating the same ones meanwhile is fine.
 */
export function makeParents(target: OutputTarget): string[] {
  const missing: string[] = [];
  let p = target.parent;
  for (;;) {
    const st = lstatOrUndefined(p, target.given);
    if (st) {
      if (!st.isDirectory()) throw new OutputError(target.given, `cannot be created: ${p} is not a folder`);
      break;
    }
    missing.push(p);
    if (dirname(p) === p) break;
    p = dirname(p);
  }
  const created: string[] = [];
  for (const m of missing.reverse()) {
    try {
      mkdirSync(m);
      created.push(m);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST' && lstatOrUndefined(m, target.given)?.isDirectory()) continue;
      throw new OutputError(target.given, `cannot create ${m}: ${(err as Error).message}`);
    }
  }
  return created;
}

function outputTarget(given: string): OutputTarget {
  const abs = resolve(given);
  if (abs === parse(abs).root) throw new OutputError(given, 'is the root folder');
  const base = basename(abs);
  const parent = realPath(dirname(abs));
  return { given, path: join(parent, base), parent, base };
}

/** The real path of `p`, or of its nearest existing ancestor with the rest appended. */
export function realPath(p: string): string {
  const abs = resolve(p);
  const rest: string[] = [];
  let at = abs;
  for (;;) {
    try {
      return join(realpathSync(at), ...rest.reverse());
    } catch {
      if (dirname(at) === at) return abs;
      rest.push(basename(at));
      at = dirname(at);
    }
  }
}

function checkOverlap(target: OutputTarget, inputs: readonly string[]): void {
  for (const input of inputs) {
    const real = realPath(input);
    const how =
      real === target.path ? 'is the input' : within(real, target.path) ? 'contains the input' : within(target.path, real) ? 'is inside the input' : undefined;
    if (how) throw new OutputError(target.given, `${how} ${input}: crownlabs replaces its output whole, so it never writes over, around or into what it reads. Choose an output outside the inputs and the config file.`);
  }
}

/** `inner` is strictly below `outer`. */
function within(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function lstatOrUndefined(p: string, given: string): Stats | undefined {
  try {
    return lstatSync(p);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ENOTDIR') throw new OutputError(given, `cannot be used: a parent of ${p} is not a folder`);
    throw new OutputError(given, `cannot be used: ${(err as Error).message}`);
  }
}

function symlinkError(given: string, path: string, what: 'file' | 'folder'): OutputError {
  let to = '';
  try {
    to = ` to ${readlinkSync(path)}`;
  } catch {
    // dangling or unreadable: the message stays without the target
  }
  return new OutputError(given, `is a symbolic link${to}: crownlabs replaces its output ${what} by renames, which would replace the link itself, so it refuses links. Give the real ${what} path instead.`);
}

/** The file's first bytes are the header's first line (read from the start only: the file may be large). */
function startsWith(file: string, header: string): boolean {
  const line = Buffer.from(header.split('\n')[0]);
  const buf = Buffer.alloc(line.length);
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    return readSync(fd, buf, 0, buf.length, 0) === buf.length && buf.equals(line);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
