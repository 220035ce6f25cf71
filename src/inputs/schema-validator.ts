import type { Ajv, ErrorObject, Options, ValidateFunction } from 'ajv';
import { AjvCache, cacheableAjv } from './ajv-cache.ts';
import { addFormats } from './ajv-formats.ts';
import { OBJECT_META_SCHEMA } from './core-schemas.ts';
import type { CrdVersion } from './crd-schemas.ts';
import { pointerToFieldPath } from './problems.ts';


export interface SchemaIssue {
  /** JSON pointer into the object, e.g. `/spec/running`. */
  pointer: string;
  field: string;
  message: string;
}

/**
 * Turns a CRD's structural OpenAPI v3 schema into a JSON Schema that behaves like the API server:
 * unknown fields are rejected (kubectl's default strict field validation) unless the schema says
 * `x-kubernetes-preserve-unknown-fields`, and `default`s are applied (ajv `useDefaults`).
 * The root `metadata` is checked as ObjectMeta (./core-schemas.ts), as the API server does apart
 * from the CRD schema: unknown fields are errors there too.
 */
export function toJsonSchema(node: unknown, atRoot = true): unknown {
  if (Array.isArray(node)) return node.map((n) => toJsonSchema(n, false));
  if (!node || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(src)) {
    if (key.startsWith('x-kubernetes-') || key === 'description' || key === 'example') continue;
    if (key === 'properties') {
      const props: Record<string, unknown> = {};
      for (const [name, child] of Object.entries(value as Record<string, unknown>)) {
        props[name] = toJsonSchema(atRoot && name === 'metadata' ? OBJECT_META_SCHEMA : child, false);
      }
      out.properties = props;
    } else if (key === 'items' || key === 'additionalProperties' || key === 'not') {
      out[key] = typeof value === 'object' ? toJsonSchema(value, false) : value;
    } else if (key === 'allOf' || key === 'anyOf' || key === 'oneOf') {
      out[key] = toJsonSchema(value, false);
    } else {
      out[key] = value;
    }
  }
  if (src['x-kubernetes-int-or-string']) {
    // One custom keyword instead of anyOf branches, so a bad value gets one clear message.
    delete out.anyOf;
    delete out.pattern;
    out[typeof src.pattern === 'string' ? 'k8sQuantity' : 'k8sIntOrString'] = true;
  }
  const preserve = src['x-kubernetes-preserve-unknown-fields'] === true;
  if (src.type === 'object' && src.properties && src.additionalProperties === undefined && !preserve) {
    out.additionalProperties = false;
  }
  return out;
}

/** The quantity pattern of the CRDs (resource.Quantity's regular expression). */
export const QUANTITY_PATTERN =
  /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$/;

const AJV_OPTIONS: Options = { allErrors: true, useDefaults: true, strict: false, validateFormats: true };

/** Compiles (or loads from the compiled-schema cache, ./ajv-cache.ts) one validator per CRD version. */
export class SchemaValidator {
  private readonly ajv: Ajv;
  private readonly cache: AjvCache;
  private readonly validators = new Map<string, ValidateFunction>();

  /** `cacheDir`: as in AjvCache (default `<package root>/.cache/schemas`; `false`: nowhere). */
  constructor(
    private readonly crds: readonly CrdVersion[],
    options: { cacheDir?: string | false } = {},
  ) {
    this.ajv = cacheableAjv(AJV_OPTIONS, (ajv) => {
      addFormats(ajv);
      ajv.addKeyword({
        keyword: 'k8sQuantity',
        errors: false,
        validate: (_: boolean, data: unknown) =>
          (typeof data === 'number' && Number.isInteger(data)) || (typeof data === 'string' && QUANTITY_PATTERN.test(data)),
      });
      ajv.addKeyword({
        keyword: 'k8sIntOrString',
        errors: false,
        validate: (_: boolean, data: unknown) => (typeof data === 'number' && Number.isInteger(data)) || typeof data === 'string',
      });
    });
    this.cache = new AjvCache(this.ajv, AJV_OPTIONS, options.cacheDir);
  }

  /** The CRD version for an apiVersion/kind pair, if vendored. */
  find(apiVersion: string, kind: string): CrdVersion | undefined {
    return this.crds.find((c) => (c.group ? `${c.group}/${c.version}` : c.version) === apiVersion && c.kind === kind);
  }

  /** Validates `obj` in place (defaults are written into it) and returns every issue found. */
  validate(crd: CrdVersion, obj: unknown): SchemaIssue[] {
    // A missing spec reads as an empty one, as the operators' Go types see it: its required
    // fields are reported, and nothing downstream meets a CrownLabs object without a spec.
    if (isObject(obj) && obj.spec === undefined && hasSpec(crd.schema)) obj.spec = {};
    const id = `${crd.group}/${crd.version}/${crd.kind}`;
    let validate = this.validators.get(id);
    if (!validate) {
      const schema = toJsonSchema(crd.schema) as object;
      validate = this.cache.compile(schema, [], () => this.ajv.compile(schema)).validate;
      this.validators.set(id, validate);
    }
    if (validate(obj)) return [];
    return dedupe((validate.errors ?? []).map(toIssue));
  }
}

export const UNKNOWN_FIELD = 'unknown field';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasSpec(schema: unknown): boolean {
  const spec = isObject(schema) && isObject(schema.properties) ? schema.properties.spec : undefined;
  return isObject(spec) && spec.type === 'object';
}

function toIssue(e: ErrorObject): SchemaIssue {
  let pointer = e.instancePath;
  let message = e.message ?? 'is invalid';
  if (e.keyword === 'additionalProperties') {
    const extra = String((e.params as { additionalProperty: string }).additionalProperty);
    pointer = `${pointer}/${extra.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    message = UNKNOWN_FIELD;
  } else if (e.keyword === 'required') {
    const missing = String((e.params as { missingProperty: string }).missingProperty);
    pointer = `${pointer}/${missing.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    message = 'required value is missing';
  } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'byte') {
    message = 'must be base64';
  } else if (KEYWORD_MESSAGES[e.keyword]) {
    message = KEYWORD_MESSAGES[e.keyword];
  } else if (e.keyword === 'enum') {
    message = `must be one of ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return { pointer, field: pointerToFieldPath(pointer), message };
}

const KEYWORD_MESSAGES: Record<string, string> = {
  k8sQuantity: 'must be a Kubernetes quantity (an integer or a string such as 500m, 2, 4Gi)',
  k8sIntOrString: 'must be an integer or a string',
};

/** One issue per field and message, in the order ajv found them (int-or-string and anyOf repeat). */
export function dedupe<T extends { pointer: string; message: string }>(issues: T[]): T[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.pointer}\0${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
