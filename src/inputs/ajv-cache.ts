/**
 * Compiled ajv validators kept as standalone code (ajv's `standalone` module) in
 * `<package root>/.cache/schemas/`, one file per schema: compiling the vendored schemas costs ~1 s
 * per `crownlabs validate` (KubeVirt's alone ~0.7 s), loading their code a few milliseconds.
 * A file's name is a hash of everything the code depends on: the schema and the documents it refers
 * to (as converted and with the rules merged in), ajv's and ajv-formats' versions, the options, and
 * the keywords and formats the instance knows. Anything wrong with a file (missing, truncated,
 * tampered, unreadable, a folder that cannot be written) is a miss: the schema is compiled as
 * before, so the cache can cost time, never change a result. Safe to delete; `CROWNLABS_SCHEMA_CACHE=0`
 * turns it off.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { _, Ajv, type AnySchema, type Options, type ValidateFunction } from 'ajv';
import { writeFileAtomically } from '../cache-file.ts';
import { schemaCacheDir } from '../paths.ts';

const FORMAT = 'crownlabs-ajv-cache v1';
/** Files kept in the folder (other schemas, other versions): the least recently written go first. */
const KEEP_FILES = 64;
const require = createRequire(import.meta.url);

type StandaloneCode = (ajv: Ajv, validate: ValidateFunction) => string;

/**
 * An Ajv instance whose compiled code can be saved: `setup` adds formats and keywords, then every
 * user keyword's function is named in the code as `keywords[<name>]` and every format as
 * `formats[<name>]`, both handed in again when a saved file is loaded.
 */
export function cacheableAjv(options: Options, setup: (ajv: Ajv) => void): Ajv {
  const ajv = new Ajv({ ...options, code: { ...options.code, source: true, formats: _`formats` } });
  setup(ajv);
  for (const [name, fn] of Object.entries(keywordFunctions(ajv))) ajv.scope.value('keyword', { ref: fn, code: _`keywords[${name}]` });
  return ajv;
}

/** The user keywords defined by a `validate` function, by name. */
function keywordFunctions(ajv: Ajv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, rule] of Object.entries(ajv.RULES.all)) {
    const validate = typeof rule === 'object' ? (rule.definition as { validate?: unknown }).validate : undefined;
    if (typeof validate === 'function') out[name] = validate;
  }
  return out;
}

export interface CompiledSchema {
  validate: ValidateFunction;
  /** Loaded from the cache (else compiled). */
  cached: boolean;
}

export class AjvCache {
  private readonly salt: string;
  private readonly keywords: Record<string, unknown>;
  private readonly dir: string | undefined;

  /** `dir`: default `<package root>/.cache/schemas`; `false` (or CROWNLABS_SCHEMA_CACHE=0): no cache. */
  constructor(
    private readonly ajv: Ajv,
    options: Options,
    dir?: string | false,
  ) {
    this.keywords = keywordFunctions(ajv);
    this.dir = dir === false || process.env.CROWNLABS_SCHEMA_CACHE === '0' ? undefined : (dir ?? schemaCacheDir());
    // What shapes the generated code besides the schema. Functions are not part of it: the code
    // calls the keywords' and formats' functions by name, as this process has them.
    const keywordDefs = Object.entries(ajv.RULES.all).map(([name, rule]) => [name, name in this.keywords && typeof rule === 'object' ? rule.definition : true]);
    const formats = Object.entries(ajv.formats).map(([name, f]) => [name, f instanceof RegExp ? `regexp ${String(f)}` : typeof f === 'object' ? { ...f, kind: 'object' } : typeof f]);
    this.salt = JSON.stringify([FORMAT, version('ajv'), version('ajv-formats'), options, keywordDefs, formats]);
  }

  /**
   * The validator of `schema`, loaded from the cache or compiled by `compile` (which adds what the
   * schema refers to first). `parts`: everything besides `schema` that its code depends on (the
   * documents it refers to), as JSON values.
   */
  compile(schema: AnySchema, parts: readonly string[], compile: () => ValidateFunction): CompiledSchema {
    const file = this.dir && join(this.dir, `${this.key(schema, parts)}.js`);
    if (file) {
      const loaded = this.load(file);
      if (loaded) return { validate: loaded, cached: true };
    }
    const validate = compile();
    if (file) this.store(file, validate);
    return { validate, cached: false };
  }

  private key(schema: AnySchema, parts: readonly string[]): string {
    const h = createHash('sha256').update(this.salt).update('\0').update(JSON.stringify(schema));
    for (const p of parts) h.update('\0').update(p);
    return h.digest('hex').slice(0, 32);
  }

  private load(file: string): ValidateFunction | undefined {
    try {
      const text = readFileSync(file, 'utf8');
      const nl = text.indexOf('\n');
      const code = text.slice(nl + 1);
      if (nl < 0 || text.slice(0, nl) !== header(code)) return undefined;
      const module = { exports: {} as unknown };
      // The code ajv generates for one schema: CommonJS, ajv's runtime helpers through `require`,
      // keywords called with the instance as `self`.
      new Function('module', 'exports', 'require', 'self', 'formats', 'keywords', code)(module, module.exports, require, this.ajv, this.ajv.formats, this.keywords);
      return typeof module.exports === 'function' ? (module.exports as ValidateFunction) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Never throws: a cache that cannot be written is no cache. */
  private store(file: string, validate: ValidateFunction): void {
    try {
      const lib = require('ajv/dist/standalone') as { default?: StandaloneCode } | StandaloneCode;
      const standaloneCode = typeof lib === 'function' ? lib : lib.default!;
      const code = standaloneCode(this.ajv, validate);
      writeFileAtomically(file, `${header(code)}\n${code}`);
      prune(this.dir!);
    } catch {
      // Not cacheable (a keyword without code, a read-only folder…): compiled next time too.
    }
  }
}

function header(code: string): string {
  return `// ${FORMAT} ${createHash('sha256').update(code).digest('hex')}`;
}

function version(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version;
}

function prune(dir: string): void {
  const names = readdirSync(dir);
  // A writer that died before its rename left its temporary file.
  for (const f of names) if (f.includes('.tmp-') && statSync(join(dir, f)).mtimeMs < Date.now() - 600_000) rmSync(join(dir, f), { force: true });
  const files = names
    .filter((f) => f.endsWith('.js'))
    .map((f) => ({ f, t: statSync(join(dir, f)).mtimeMs }));
  if (files.length <= KEEP_FILES) return;
  files.sort((a, b) => a.t - b.t);
  for (const { f } of files.slice(0, files.length - KEEP_FILES)) rmSync(join(dir, f), { force: true });
}
