/**
 * Offline validation of rendered objects, the way the API server would take them with
 * `kubectl apply --validate=strict`: the vendored OpenAPI/CRD schema of the kind (unknown fields,
 * required fields, types, formats, quantities), ObjectMeta (name, namespace, labels,
 * annotations) and the Go-side rules of src/model/api-server-rules.ts. One validator per kind, made lazily (most runs
 * never need most kinds) and loaded from the compiled-schema cache (src/inputs/ajv-cache.ts) when it
 * holds it: compiling the KubeVirt schemas alone takes ~0.7 s.
 */
import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { AjvCache, cacheableAjv } from '../inputs/ajv-cache.ts';
import { addFormats } from '../inputs/ajv-formats.ts';
import { dedupe } from '../inputs/schema-validator.ts';
import type { Source } from '../inputs/parse.ts';
import { pointerToFieldPath, type Problem } from '../inputs/problems.ts';
import type { RenderedSet } from '../compose/compose.ts';
import { parentKey, type ParentRef } from '../model/labels.ts';
import { isDns1123Label } from '../inputs/k8s-names.ts';
import { FORMAT_MESSAGES, nameProblem, NAME_MESSAGES } from '../model/api-server-rules.ts';
import { registerRules } from './rules/index.ts';
import { collisionProblems } from '../compose/prewrite.ts';
import { k8sDocument, k8sSchemaSource, kindSchema, type KindSchema } from './schemas.ts';


export interface ObjectIssue {
  /** JSON pointer into the object, e.g. `/spec/replicas`. */
  pointer: string;
  /** kubectl-style field path, e.g. `spec.template.spec.containers[0].resources.limits.cpu`. */
  field: string;
  message: string;
}

/** How long one kind's validator took to build. */
export interface CompileTiming {
  apiVersion: string;
  kind: string;
  ms: number;
  /** Loaded from the compiled-schema cache (src/inputs/ajv-cache.ts) instead of compiled. */
  cached: boolean;
}

// `code.optimize: false` and `inlineRefs: false` halve compile times (the KubeVirt schemas are
// large) at no measurable cost per object; `verbose` puts the bad value into messages.
const AJV_OPTIONS: Options = {
  allErrors: true,
  strict: false,
  verbose: true,
  useDefaults: false,
  validateFormats: true,
  validateSchema: false,
  inlineRefs: false,
  code: { optimize: false },
};

interface Compiled {
  info: KindSchema;
  validate: ValidateFunction;
}

export class RenderedObjectValidator {
  private readonly ajv: Ajv;
  private readonly cache: AjvCache;
  private readonly documents = new Set<string>();
  private readonly compiled = new Map<string, Compiled | null>();
  readonly timings: CompileTiming[] = [];

  /** `cacheDir`: where compiled validators are kept (default `<package root>/.cache/schemas`; `false`: nowhere). */
  constructor(options: { cacheDir?: string | false } = {}) {
    this.ajv = cacheableAjv(AJV_OPTIONS, (ajv) => {
      addFormats(ajv, ['date-time', 'byte', 'int32', 'int64', 'float', 'double']);
      registerRules(ajv);
    });
    this.cache = new AjvCache(this.ajv, AJV_OPTIONS, options.cacheDir);
  }

  /** Where the schema of apiVersion/kind comes from, if one is vendored (compiles nothing). */
  schemaOf(apiVersion: string, kind: string): KindSchema | undefined {
    return this.compiled.get(`${apiVersion}/${kind}`)?.info ?? kindSchema(apiVersion, kind);
  }

  /**
   * Every issue of one rendered object; `[]` when the API server would accept it. The object is
   * checked as a sink writes it (its JSON form: `undefined` fields dropped, `toJSON()` applied).
   */
  validate(rendered: unknown): ObjectIssue[] {
    const object = rendered === undefined || isPlainJson(rendered) ? rendered : (JSON.parse(JSON.stringify(rendered)) as unknown);
    const issues: ObjectIssue[] = [];
    const add = (pointer: string, message: string) => issues.push({ pointer, field: pointerToFieldPath(pointer), message });
    if (!isObject(object)) {
      add('', 'an object must be a mapping with apiVersion, kind and metadata');
      return issues;
    }
    const { apiVersion, kind } = object;
    if (typeof apiVersion !== 'string' || apiVersion === '') add('/apiVersion', 'required value is missing');
    if (typeof kind !== 'string' || kind === '') add('/kind', 'required value is missing');
    if (issues.length) return issues;
    const compiled = this.get(apiVersion as string, kind as string);
    if (!compiled) {
      add('/kind', `no schema is vendored for apiVersion "${String(apiVersion)}" kind "${String(kind)}" (imports/k8s-openapi: ${k8sSchemaSource()}; imports/crds)`);
      return issues;
    }
    this.checkMetadata(object, compiled.info, add);
    if (!compiled.validate(object)) {
      for (const e of compiled.validate.errors ?? []) {
        const issue = toIssue(e);
        if (issue) add(issue.pointer, issue.message);
      }
    }
    return dedupe(issues);
  }

  private get(apiVersion: string, kind: string): Compiled | undefined {
    const key = `${apiVersion}/${kind}`;
    const hit = this.compiled.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const start = performance.now();
    const info = kindSchema(apiVersion, kind);
    let entry: Compiled | null = null;
    if (info) {
      const compiled = this.cache.compile(info.schema, info.documents.map(documentJson), () => {
        for (const file of info.documents) {
          if (this.documents.has(file)) continue;
          this.ajv.addSchema(k8sDocument(file));
          this.documents.add(file);
        }
        return this.ajv.compile(info.schema);
      });
      entry = { info, validate: compiled.validate };
      this.timings.push({ apiVersion, kind, ms: performance.now() - start, cached: compiled.cached });
    }
    this.compiled.set(key, entry);
    return entry ?? undefined;
  }

  // ValidateObjectMeta: the name (by the kind's rule), the namespace against the kind's scope.
  private checkMetadata(object: Record<string, unknown>, info: KindSchema, add: (pointer: string, message: string) => void): void {
    const meta = object.metadata;
    if (!isObject(meta)) {
      add('/metadata', 'required value is missing');
      return;
    }
    const name = meta.name;
    if (typeof name !== 'string' || name === '') {
      add('/metadata/name', 'required value is missing');
    } else {
      const problem = nameProblem(info.apiVersion, info.kind, name);
      if (problem) add('/metadata/name', `invalid name ${JSON.stringify(name)}: ${problem}`);
    }
    const namespace = meta.namespace;
    if (info.namespaced) {
      if (typeof namespace !== 'string' || namespace === '') add('/metadata/namespace', `required value is missing: ${info.kind} is namespaced`);
      else if (!isDns1123Label(namespace)) add('/metadata/namespace', `invalid namespace ${JSON.stringify(namespace)}: ${NAME_MESSAGES.dns1123Label}`);
    } else if (namespace !== undefined && namespace !== '') {
      add('/metadata/namespace', `${info.kind} is cluster-scoped and takes no namespace`);
    }
  }
}

const documentJsons = new Map<string, string>();
/** A document as the cache key takes it (JSON, once per file). */
function documentJson(file: string): string {
  let json = documentJsons.get(file);
  if (json === undefined) {
    json = JSON.stringify(k8sDocument(file));
    documentJsons.set(file, json);
  }
  return json;
}

let shared: RenderedObjectValidator | undefined;

/** A process-wide validator: compiled kinds are reused across calls. */
export function sharedValidator(): RenderedObjectValidator {
  shared ??= new RenderedObjectValidator();
  return shared;
}

export interface RenderedValidation {
  problems: Problem[];
  objects: number;
  sets: number;
  /** Milliseconds spent validating (schema loading and compiling included). */
  ms: number;
}

/**
 * Validates every object of every rendered set. Each problem names the resource set (`file`: the
 * set's id), the object (`kind`, `name`: `namespace/name`), the field path, and in its message the
 * input that produced the set (and where that input was read, when `sourceOf` knows).
 */
export function validateRenderedSets(
  sets: readonly RenderedSet[],
  options: { validator?: RenderedObjectValidator; sourceOf?: (parent: ParentRef) => Source | undefined } = {},
): RenderedValidation {
  const validator = options.validator ?? sharedValidator();
  const start = performance.now();
  const problems: Problem[] = [];
  let objects = 0;
  for (const set of sets) {
    objects += set.objects.length;
    problems.push(...validateRenderedSet(set, validator, options.sourceOf));
  }
  // Two inputs rendering one object (or one rendering it twice): only one could exist.
  problems.push(...collisionProblems(sets, options.sourceOf));
  return { problems, objects, sets: sets.length, ms: performance.now() - start };
}

/** The issues of one rendered object that has any, with what names it in a problem. */
export interface RenderedObjectIssues {
  kind: string;
  /** `namespace/name`, or `name`; undefined when the object has no string name. */
  name?: string;
  issues: ObjectIssue[];
}

/** The issues of a set's rendered objects, only for those that have any (the part a validation thread does). */
export function renderedObjectIssues(rendered: readonly unknown[], validator: RenderedObjectValidator): RenderedObjectIssues[] {
  const out: RenderedObjectIssues[] = [];
  for (const object of rendered) {
    const issues = validator.validate(object);
    if (issues.length === 0) continue;
    const meta = (object as { metadata?: { name?: unknown; namespace?: unknown } } | undefined)?.metadata;
    const name = typeof meta?.name === 'string' ? (typeof meta.namespace === 'string' && meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name) : undefined;
    out.push({ kind: String((object as { kind?: unknown } | undefined)?.kind ?? ''), name, issues });
  }
  return out;
}

/** The problems of one set's object issues: each names the set, the object, the field and the input it came from. */
export function setIssueProblems(unit: RenderedSet['unit'], found: readonly RenderedObjectIssues[], sourceOf?: (parent: ParentRef) => Source | undefined): Problem[] {
  if (found.length === 0) return [];
  const src = sourceOf?.(unit.parent);
  const from = `rendered for ${parentKey(unit.parent)}${src ? ` from ${src.file}, document ${src.document}` : ''}`;
  return found.flatMap(({ kind, name, issues }) => issues.map((issue): Problem => ({ severity: 'error', file: unit.id, kind, name, field: issue.field, message: `${issue.message} (${from})` })));
}

/**
 * The schema problems of one rendered set (collisions between sets aside): what validateRenderedSets
 * reports for it, so that a caller can validate sets as they are rendered and drop their objects.
 */
export function validateRenderedSet(set: RenderedSet, validator: RenderedObjectValidator, sourceOf?: (parent: ParentRef) => Source | undefined): Problem[] {
  return setIssueProblems(set.unit, renderedObjectIssues(set.objects, validator), sourceOf);
}

function escape(seg: string): string {
  return seg.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return `${typeof v} ${JSON.stringify(v)}`;
}

function toIssue(e: ErrorObject): { pointer: string; message: string } | undefined {
  const pointer = e.instancePath;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return { pointer: `${pointer}/${escape(String(params.additionalProperty))}`, message: 'unknown field (not in the schema)' };
    case 'required':
      return { pointer: `${pointer}/${escape(String(params.missingProperty))}`, message: 'required value is missing' };
    case 'type':
      return { pointer, message: `must be of type ${String(params.type)}, not ${describe(e.data)}` };
    case 'enum':
      return { pointer, message: `unsupported value ${JSON.stringify(e.data)}: must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'format': {
      const text = FORMAT_MESSAGES[String(params.format)] ?? `must match format "${String(params.format)}"`;
      // Inside `propertyNames` the failing key is the value; report it at the key itself.
      if (e.propertyName !== undefined) return { pointer: `${pointer}/${escape(e.propertyName)}`, message: `invalid key ${JSON.stringify(e.propertyName)}: ${text}` };
      return { pointer, message: `invalid value ${JSON.stringify(e.data)}: ${text}` };
    }
    case 'propertyNames':
      // The failing name is reported by the nested `format` error (with its own path).
      return undefined;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return { pointer, message: `${JSON.stringify(e.data)}: ${e.message ?? 'out of range'}` };
    case 'if':
    case 'allOf':
      // Their failing subschemas are reported on their own.
      return undefined;
    default:
      return { pointer, message: e.message ?? 'is invalid' };
  }
}



/**
 * `v` is already its own JSON form (JSON.parse(JSON.stringify(v)) would equal it key for key), so it
 * can be validated without that copy (~12% of `crownlabs validate`; ajv, with no defaults, no
 * coercion and no removal, does not change what it checks): plain objects and arrays, strings,
 * booleans, null and finite numbers (not -0), no `undefined` and no `toJSON`.
 */
export function isPlainJson(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    case 'object': {
      if (v === null) return true;
      if (Array.isArray(v)) {
        if (Object.getPrototypeOf(v) !== Array.prototype) return false;
        for (let i = 0; i < v.length; i++) if (!(i in v) || !isPlainJson(v[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false;
      if ('toJSON' in v) return false;
      for (const key in v) if (!isPlainJson((v as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
