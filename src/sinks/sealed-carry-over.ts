import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseDocument } from 'yaml';
import { isOutputFolder } from '../output-marker.ts';
import { objectToYaml } from './yaml-emitter.ts';

/**
 * Sealed values survive a re-render (docs/gitops.md, "Sync, waves and Secrets"). In
 * `sealed-secret` mode the tree's SealedSecrets hold `SEAL-ME` placeholders; an operator replaces
 * them with `kubeseal --raw` output and commits. The next run reads the previous SealedSecret of
 * the same path from the output folder and keeps each value that looks sealed, for the keys the new
 * rendering still has, when the object is the same (apiVersion, kind, namespace, name, scope,
 * template type). Only `spec.encryptedData` values are ever taken from the old file, and only when
 * the folder is one crownlabs wrote; anything odd (a symlink, a special or huge file, not YAML,
 * other fields) is ignored, never an error: the placeholder stays.
 */

/** A Secret holds at most 1 MiB; sealed (with a 512-byte session key and the label), base64: below 2 MiB. */
export const MAX_SEALED_VALUE = 2 * 1024 * 1024;
/** A previous SealedSecret file larger than this is not read. */
export const MAX_SEALED_FILE = 8 * 1024 * 1024;

const PLACEHOLDER = 'SEAL-ME';
const SEALED_VALUE = /^[A-Za-z0-9+/]+={0,2}$/;
const SCOPE_ANNOTATIONS = ['sealedsecrets.bitnami.com/cluster-wide', 'sealedsecrets.bitnami.com/namespace-wide'];

export interface CarryOverResult {
  files: Map<string, string>;
  /** Values taken over from the folder. */
  carried: number;
  /** Placeholder values left, and the SealedSecrets holding at least one. */
  placeholders: number;
  withPlaceholders: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value `kubeseal --raw` could have written: standard base64, bounded. */
export function looksSealed(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= MAX_SEALED_VALUE && v.length % 4 === 0 && SEALED_VALUE.test(v);
}

/**
 * `files` with the sealed values of the SealedSecrets already in `outDir` carried over. Files other
 * than SealedSecrets are returned as they are (the same Map when nothing is carried).
 */
export function carryOverSealed(outDir: string, files: ReadonlyMap<string, string>): CarryOverResult {
  const result: CarryOverResult = { files: new Map(files), carried: 0, placeholders: 0, withPlaceholders: 0 };
  const readable = isRealFolder(outDir) && isOutputFolder(outDir);
  for (const [rel, content] of files) {
    if (!basename(rel).startsWith('SealedSecret_')) continue;
    const next = parseObject(content);
    const data = isObj(next?.spec) ? next.spec.encryptedData : undefined;
    if (!next || !isObj(data)) continue;
    let changed = false;
    const previous = readable ? previousValues(outDir, rel, next) : undefined;
    if (previous) {
      for (const key of Object.keys(data)) {
        const v = previous.get(key);
        if (v !== undefined && v !== data[key]) {
          data[key] = v;
          changed = true;
          result.carried++;
        }
      }
    }
    const left = Object.values(data).filter((v) => typeof v === 'string' && v.startsWith(PLACEHOLDER)).length;
    result.placeholders += left;
    if (left > 0) result.withPlaceholders++;
    if (changed) result.files.set(rel, objectToYaml(next));
  }
  return result;
}

/** The sealed values of the previous file at `rel`, if it is the same SealedSecret. */
function previousValues(outDir: string, rel: string, next: Obj): Map<string, string> | undefined {
  const text = readContained(outDir, rel);
  if (text === undefined || !text.includes('encryptedData')) return undefined;
  const old = parseObject(text);
  if (!old || !isObj(old.spec) || !isObj(old.spec.encryptedData)) return undefined;
  if (identity(old) !== identity(next)) return undefined;
  const values = new Map<string, string>();
  for (const [key, v] of Object.entries(old.spec.encryptedData)) if (looksSealed(v)) values.set(key, v);
  return values;
}

/** What a sealed value is bound to, and what the rendered Secret is: a value sealed for another is useless. */
function identity(o: Obj): string {
  const meta = isObj(o.metadata) ? o.metadata : {};
  const spec = isObj(o.spec) ? o.spec : {};
  const template = isObj(spec.template) ? spec.template : {};
  const tmeta = isObj(template.metadata) ? template.metadata : {};
  const scope = (m: Obj) => {
    const a = isObj(m.annotations) ? m.annotations : {};
    return SCOPE_ANNOTATIONS.map((k) => String(a[k] ?? ''));
  };
  return JSON.stringify([o.apiVersion, o.kind, meta.namespace, meta.name, scope(meta), scope(tmeta), template.type ?? 'Opaque']);
}

/** One YAML document holding a map, or undefined (never throws; aliases bounded). */
function parseObject(text: string): Obj | undefined {
  try {
    const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false });
    if (doc.errors.length > 0) return undefined;
    const v = doc.toJS({ maxAliasCount: 0 }) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

function isRealFolder(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The text of `outDir/rel` when every folder on the way is a real folder (no symlink) and the file
 * a regular file of bounded size, opened without following a symlink; else undefined.
 */
function readContained(outDir: string, rel: string): string | undefined {
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\\'))) return undefined;
  let at = outDir;
  try {
    for (const dir of parts.slice(0, -1)) {
      at = join(at, dir);
      if (!lstatSync(at).isDirectory()) return undefined;
    }
    const file = join(at, parts[parts.length - 1]);
    const st = lstatSync(file);
    if (!st.isFile() || st.size > MAX_SEALED_FILE) return undefined;
    // O_NONBLOCK: a FIFO swapped in after the lstat does not hang the run.
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const fst = fstatSync(fd);
      if (!fst.isFile() || fst.size > MAX_SEALED_FILE || fst.ino !== st.ino || fst.dev !== st.dev) return undefined;
      const buf = Buffer.alloc(fst.size);
      let n = 0;
      while (n < buf.length) {
        const r = readSync(fd, buf, n, buf.length - n, n);
        if (r === 0) break;
        n += r;
      }
      return buf.subarray(0, n).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}
