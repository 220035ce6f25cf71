/**
 * The vendored schemas, as JSON Schemas ajv can compile: Kubernetes' OpenAPI v3 documents
 * (imports/k8s-openapi/, one ajv resource per document, `$ref`s resolved inside it) and the CRDs
 * (imports/crds/, through src/inputs/crd-schemas.ts). Both behave like the API server with strict
 * field validation: unknown fields are errors unless the schema preserves them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCrdVersions, type CrdVersion } from '../inputs/crd-schemas.ts';
import { toJsonSchema } from '../inputs/schema-validator.ts';
import { packageRoot } from '../runtime/package-root.mjs';
import { CRD_RULES, K8S_RULES } from '../model/api-server-rules.ts';

export const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
/** The document every object's metadata is checked against (ObjectMeta is the same in all). */
const CORE_DOCUMENT = 'api__v1_openapi.json';
const ID_BASE = 'https://crownlabs.polito.it/schemas/k8s-openapi/';

/** Where the schema of one apiVersion/kind comes from and how ajv reaches it. */
export interface KindSchema {
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  origin: 'kubernetes' | 'crd';
  /** The vendored file, relative to the project root. */
  file: string;
  /** The JSON Schema to compile (a `$ref` into a document for Kubernetes kinds). */
  schema: Record<string, unknown>;
  /** Vendored OpenAPI documents the schema refers to: add them to ajv first. */
  documents: string[];
}

interface IndexEntry {
  file: string;
  schema: string;
  namespaced: boolean;
}

interface K8sIndex {
  source: string;
  kinds: Record<string, IndexEntry>;
}

export function k8sOpenApiDir(): string {
  return join(packageRoot(), 'imports', 'k8s-openapi');
}

let index: K8sIndex | undefined;
function k8sIndex(): K8sIndex {
  index ??= JSON.parse(readFileSync(join(k8sOpenApiDir(), 'index.json'), 'utf8')) as K8sIndex;
  return index;
}

/** Where the vendored Kubernetes schemas came from, e.g. `k8s.io/kubernetes@v1.37.2/api/openapi-spec/v3`. */
export function k8sSchemaSource(): string {
  return k8sIndex().source;
}

export function documentId(file: string): string {
  return ID_BASE + file;
}

export function componentRef(file: string, name: string): string {
  return `${documentId(file)}#/components/schemas/${name}`;
}

const documents = new Map<string, Record<string, unknown>>();

/** One vendored OpenAPI document as an ajv schema resource (`$id` set, components converted). */
export function k8sDocument(file: string): Record<string, unknown> {
  let doc = documents.get(file);
  if (!doc) {
    const raw = JSON.parse(readFileSync(join(k8sOpenApiDir(), file), 'utf8')) as { components: { schemas: Record<string, Record<string, unknown>> } };
    const schemas: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(raw.components.schemas)) schemas[name] = k8sComponentSchema(name, schema);
    doc = { $id: documentId(file), components: { schemas } };
    documents.set(file, doc);
  }
  return doc;
}

/**
 * One OpenAPI component as JSON Schema: `Quantity` and `IntOrString` become one keyword each (one
 * clear message instead of `oneOf` branches), objects with `properties` reject unknown fields,
 * `x-kubernetes-*`, `default` and `description` go, and the rules of src/model/api-server-rules.ts are merged in.
 */
export function k8sComponentSchema(name: string, schema: Record<string, unknown>): Record<string, unknown> {
  if (name === QUANTITY) return { k8sResourceQuantity: true };
  if (name === INT_OR_STRING) return { k8sIntOrString: 'int32' };
  const out = convert(schema) as Record<string, unknown>;
  const rule = K8S_RULES[name];
  if (!rule) return out;
  const props = (out.properties ?? {}) as Record<string, Record<string, unknown>>;
  for (const [prop, extra] of Object.entries(rule.properties ?? {})) {
    if (!props[prop]) throw new Error(`validation rule for ${name}.${prop}: no such property in the vendored schema`);
    props[prop] = merge(props[prop], extra);
  }
  if (rule.required) out.required = [...new Set([...((out.required as string[] | undefined) ?? []), ...rule.required])];
  if (rule.keywords) Object.assign(out, rule.keywords);
  return out;
}

function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const src = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(src)) {
    if (key.startsWith('x-kubernetes-') || key === 'description' || key === 'default' || key === 'example') continue;
    if (key === 'properties') {
      out.properties = Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([p, s]) => [p, convert(s)]));
    } else {
      out[key] = convert(value);
    }
  }
  if (src.format === 'int-or-string') {
    delete out.format;
    delete out.oneOf;
    delete out.anyOf;
    delete out.type;
    out.k8sIntOrString = 'int32';
  }
  if (src.type === 'object' && src.properties && src.additionalProperties === undefined && src['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }
  return out;
}

/** Both schemas must hold: keys merged when they do not collide, `allOf` otherwise. */
function merge(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  return Object.keys(extra).some((k) => k in base) ? { allOf: [base, extra] } : { ...base, ...extra };
}

/** The schema of a Kubernetes kind served by the vendored group-versions. */
export function k8sKindSchema(apiVersion: string, kind: string): KindSchema | undefined {
  const entry = k8sIndex().kinds[`${apiVersion}/${kind}`];
  if (!entry) return undefined;
  return {
    apiVersion,
    kind,
    namespaced: entry.namespaced,
    origin: 'kubernetes',
    file: `imports/k8s-openapi/${entry.file}`,
    schema: { $ref: componentRef(entry.file, entry.schema) },
    documents: [entry.file],
  };
}

/**
 * The schema of a custom resource from the vendored CRDs. The file is found by name first
 * (`<group>_<kind>s.yaml`, as the vendored CRDs are named) so that only the CRD needed is parsed;
 * any file of the group is read when that guess misses.
 */
export function crdKindSchema(apiVersion: string, kind: string): KindSchema | undefined {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return undefined;
  const group = apiVersion.slice(0, slash);
  const version = apiVersion.slice(slash + 1);
  if (!/^[a-z0-9.-]+$/.test(group) || !/^[A-Za-z0-9]+$/.test(kind)) return undefined;
  const match = (c: CrdVersion) => c.group === group && c.version === version && c.kind === kind;
  const crd = loadCrdVersions([`${group}_${kind.toLowerCase()}s.yaml`]).find(match) ?? loadCrdVersions([`${group}_`]).find(match);
  if (!crd) return undefined;
  const schema = toJsonSchema(crd.schema) as Record<string, unknown>;
  const props = (schema.properties ??= {}) as Record<string, unknown>;
  // The API server checks a custom resource's metadata as ObjectMeta, apart from the CRD schema.
  props.metadata = { $ref: componentRef(CORE_DOCUMENT, OBJECT_META) };
  for (const rule of CRD_RULES[`${group}/${version}/${kind}`] ?? []) {
    let node = schema;
    for (const seg of rule.path) {
      const next = (node.properties as Record<string, Record<string, unknown>> | undefined)?.[seg];
      if (!next) throw new Error(`validation rule for ${apiVersion} ${kind}: no property ${rule.path.join('.')} in the vendored CRD`);
      node = next;
    }
    Object.assign(node, rule.keywords);
  }
  return {
    apiVersion,
    kind,
    namespaced: crd.namespaced,
    origin: 'crd',
    file: `imports/crds/${crd.file.split('/').pop()}`,
    schema,
    documents: [CORE_DOCUMENT],
  };
}

/** The schema vendored for apiVersion/kind, Kubernetes' own first. */
export function kindSchema(apiVersion: string, kind: string): KindSchema | undefined {
  return k8sKindSchema(apiVersion, kind) ?? crdKindSchema(apiVersion, kind);
}

/** Every Kubernetes apiVersion/kind with a vendored schema (for messages and tests). */
export function vendoredK8sKinds(): string[] {
  return Object.keys(k8sIndex().kinds);
}
