import { ApiObject, ApiObjectMetadataDefinition, App, ImplicitTokenResolver, Lazy, LazyResolver, NumberStringUnionResolver } from 'cdk8s';
import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { compiledConversion } from './generated-conversion.ts';

/**
 * `apiObject.toJson()`, the same value (keys in the same order), in one pass instead of cdk8s'
 * several. ApiObject.toJson resolves the props recursively (walking up to the App for its
 * resolvers at every value, allocating a key path per leaf), resolves the metadata twice, then
 * sanitises in another pass; that is most of a render (bench/RESULTS.md). Here the three built-in
 * resolvers (Lazy, implicit tokens, number/string unions such as Quantity and IntOrString) and the
 * sanitising (drop null/undefined, sort keys, reject class instances) run fused in one walk, for
 * the metadata too (its toJson also drops empty lists and maps); an L1 class's conversion to
 * Kubernetes field names runs through its own static `manifest()`, the function its `toJson()` calls.
 *
 * Anything outside that well-trodden case goes through `apiObject.toJson()` unchanged: an App with
 * custom resolvers, JSON patches, a class whose toJson is not the generated L1 one, a value the
 * fused walk does not recognise. test/unit/compose/object-json.test.ts holds the two equal.
 */
export function objectJson(obj: ApiObject): Record<string, unknown> {
  const internals = obj as unknown as { props?: Record<string, unknown>; patches?: unknown[] };
  const convert = conversionOf(obj);
  if (!convert || !internals.props || !Array.isArray(internals.patches) || internals.patches.length > 0 || !defaultResolvers(obj)) return obj.toJson();
  let resolved: Record<string, unknown>;
  try {
    const body = sanitized(internals.props, 'metadata') as Record<string, unknown>;
    const metadata = metadataJson(obj.metadata);
    resolved = {};
    if (body.apiVersion !== undefined) resolved.apiVersion = body.apiVersion;
    if (body.kind !== undefined) resolved.kind = body.kind;
    if (metadata != null) resolved.metadata = metadata;
    for (const k in body) if (k !== 'apiVersion' && k !== 'kind') resolved[k] = body[k];
  } catch {
    return obj.toJson(); // its own error message, with the construct path
  }
  return convert === PLAIN ? resolved : convert(resolved);
}

/** Whether objectJson takes the one-pass path for this object (tests: every class we render does). */
export function hasOnePassJson(obj: ApiObject): boolean {
  const internals = obj as unknown as { props?: unknown; patches?: unknown[] };
  return conversionOf(obj) !== undefined && typeof internals.props === 'object' && Array.isArray(internals.patches) && internals.patches.length === 0 && defaultResolvers(obj);
}

const PLAIN = (r: Record<string, unknown>) => r;
const K8S = k8s as unknown as Record<string, unknown>;
type Conversion = (resolved: Record<string, unknown>) => Record<string, unknown>;
const conversions = new WeakMap<object, Conversion | null>();

// The shape `cdk8s import` generates for an L1 class: toJson() is its static manifest() applied
// to ApiObject's resolved JSON.
const L1_TO_JSON = /^toJson\(\)\s*\{\s*const resolved\s*=\s*super\.toJson\(\);?\s*return\s*\{\s*\.\.\.([\w$]+)\.GVK,\s*\.\.\.([\w$]+)\(resolved\),?\s*\};?\s*\}$/;
const L1_MANIFEST = /^manifest\(props(?:\s*=\s*\{\})?\)\s*\{\s*return\s*\{\s*\.\.\.([\w$]+)\.GVK,\s*\.\.\.([\w$]+)\(props\),?\s*\};?\s*\}$/;

/** How an object's class turns ApiObject's JSON into its own; undefined when it is not known to. */
function conversionOf(obj: ApiObject): Conversion | undefined {
  const cls = obj.constructor as { manifest?: (props: unknown) => Record<string, unknown>; prototype: object; name: string };
  let c = conversions.get(cls);
  if (c === undefined) {
    c = null;
    if (cls === ApiObject) c = PLAIN;
    else if (Object.getPrototypeOf(cls) === ApiObject && Object.hasOwn(cls, 'manifest') && Object.hasOwn(cls.prototype, 'toJson')) {
      const toJson = L1_TO_JSON.exec(String((cls.prototype as { toJson: () => unknown }).toJson).trim());
      const manifest = L1_MANIFEST.exec(String(cls.manifest).trim());
      if (toJson && manifest && toJson[1] === cls.name && manifest[1] === cls.name && toJson[2] === manifest[2]) {
        const m = cls.manifest!.bind(cls);
        // manifest(props) is { ...GVK, ...toJson_<Kind>Props(props) }: for the core kinds, the same by table.
        const fast = K8S[cls.name] === cls ? compiledConversion(K8S, manifest[2]) : undefined;
        const gvk = (cls as unknown as { GVK: Record<string, unknown> }).GVK;
        c = fast ? (resolved) => ({ ...gvk, ...fast(resolved) }) : (resolved) => m(resolved);
      }
    }
    conversions.set(cls, c);
  }
  return c ?? undefined;
}

const DEFAULT_RESOLVERS = [LazyResolver, ImplicitTokenResolver, NumberStringUnionResolver];
const appsChecked = new WeakMap<object, boolean>();

function defaultResolvers(obj: ApiObject): boolean {
  const app = App.of(obj) as App;
  let ok = appsChecked.get(app);
  if (ok === undefined) {
    const r = app.resolvers;
    ok = r.length === DEFAULT_RESOLVERS.length && r.every((x, i) => Object.getPrototypeOf(x) === DEFAULT_RESOLVERS[i].prototype);
    appsChecked.set(app, ok);
  }
  return ok;
}

class Unrecognised extends Error {}

// ApiObjectMetadataDefinition.toJson as this module knows it (whitespace aside): other versions go through it.
const METADATA_TO_JSON =
  'toJson(){constsanitize=(x)=>(0,_util_1.sanitizeValue)(x,{filterEmptyArrays:true,filterEmptyObjects:true});returnsanitize((0,resolve_1.resolve)([],{...this._additionalAttributes,name:this.name,namespace:this.namespace,annotations:this.annotations,finalizers:this.finalizers,ownerReferences:this.ownerReferences,labels:this.labels,},this.apiObject));}';
const knownMetadata = String(ApiObjectMetadataDefinition.prototype.toJson).replace(/\s+/g, '') === METADATA_TO_JSON;

interface MetadataFields {
  _additionalAttributes?: Record<string, unknown>;
  name?: string;
  namespace?: string;
  annotations?: unknown;
  finalizers?: unknown;
  ownerReferences?: unknown;
  labels?: unknown;
}

/** `metadata.toJson()`: the same fields resolved and sanitised, empty lists and maps dropped. */
function metadataJson(metadata: ApiObjectMetadataDefinition): unknown {
  const m = metadata as unknown as MetadataFields;
  if (!knownMetadata || typeof m._additionalAttributes !== 'object') return metadata.toJson();
  const data = { ...m._additionalAttributes, name: m.name, namespace: m.namespace, annotations: m.annotations, finalizers: m.finalizers, ownerReferences: m.ownerReferences, labels: m.labels };
  return sanitized(data, undefined, true);
}

/** cdk8s' resolve (built-in resolvers) then sanitizeValue (sorted keys; with dropEmpty, filterEmptyArrays and filterEmptyObjects), in one walk. */
function sanitized(value: unknown, skipKey?: string, dropEmpty = false): unknown {
  for (;;) {
    if (value === null || value === undefined) return undefined;
    const t = typeof value;
    if (t === 'string' || t === 'number' || t === 'boolean') return value;
    if (t !== 'object') throw new Unrecognised();
    if (Array.isArray(value)) return sanitizedList(value, dropEmpty);
    if (Object.getPrototypeOf(value) === Object.prototype) {
      // A plain map is data unless it is an implicit token (a resolve() of its own).
      const resolve = (value as { resolve?: unknown }).resolve;
      if (typeof resolve !== 'function') return sanitizedMap(value as Record<string, unknown>, skipKey, dropEmpty);
      value = resolve.call(value);
      continue;
    }
    const v = value as { resolve?: unknown; value?: unknown };
    if (value instanceof Lazy) value = value.produce();
    else if (typeof v.resolve === 'function') value = (v.resolve as () => unknown).call(v);
    else if (typeof v.value === 'number' || typeof v.value === 'string') value = { value: v.value };
    else throw new Unrecognised();
  }
}

function sanitizedList(list: unknown[], dropEmpty: boolean): unknown[] | undefined {
  if (dropEmpty && list.length === 0) return undefined;
  const out = new Array(list.length);
  for (let i = 0; i < list.length; i++) out[i] = sanitized(list[i], undefined, dropEmpty);
  return out;
}

function sanitizedMap(map: Record<string, unknown>, skipKey: string | undefined, dropEmpty: boolean): Record<string, unknown> | undefined {
  const keys = Object.keys(map);
  if (keys.length > 1) keys.sort();
  const out: Record<string, unknown> = {};
  let empty = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (k === skipKey) continue;
    const r = sanitized(map[k], undefined, dropEmpty);
    if (r !== undefined) {
      out[k] = r;
      empty = false;
    }
  }
  return dropEmpty && empty ? undefined : out;
}
