/** Helpers the rule families share: an ajv keyword that reports at exact field paths, and value readers. */
import type { Ajv, ErrorObject, SchemaValidateFunction } from 'ajv';
import { isObject, quantity, show } from '../../model/api-server-rules.ts';

export { isObject, quantity, show };

type Push = (segments: readonly (string | number)[], message: string) => void;
type Check = (data: unknown, schema: unknown, push: Push) => void;

function escape(seg: string | number): string {
  return String(seg).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function keyword(ajv: Ajv, name: string, check: Check): void {
  const validate: SchemaValidateFunction = (schema, data, _parent, cxt) => {
    const errors: Partial<ErrorObject>[] = [];
    const base = cxt?.instancePath ?? '';
    check(data, schema, (segments, message) =>
      errors.push({ keyword: name, instancePath: base + segments.map((s) => `/${escape(s)}`).join(''), params: {}, message }),
    );
    validate.errors = errors;
    return errors.length === 0;
  };
  ajv.addKeyword({ keyword: name, validate, errors: true });
}

export function asArray(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Go's `resource.ParseQuantity` accepts it: the API server's Quantity unmarshalling. */
export function isResourceQuantity(v: unknown): boolean {
  return quantity(v) !== undefined;
}

/** A label selector's requirements, as `metav1.LabelSelectorAsSelector` builds them. */
export function selectorMatches(selector: Record<string, unknown>, labels: Record<string, unknown>): boolean {
  for (const [k, v] of Object.entries(isObject(selector.matchLabels) ? selector.matchLabels : {})) if (labels[k] !== v) return false;
  for (const e of asArray(selector.matchExpressions)) {
    if (!isObject(e) || typeof e.key !== 'string') continue;
    const has = Object.hasOwn(labels, e.key);
    const values = asArray(e.values);
    if (e.operator === 'In' && !(has && values.includes(labels[e.key]))) return false;
    if (e.operator === 'NotIn' && has && values.includes(labels[e.key])) return false;
    if (e.operator === 'Exists' && !has) return false;
    if (e.operator === 'DoesNotExist' && has) return false;
  }
  return true;
}

export function selectorIsEmpty(selector: Record<string, unknown>): boolean {
  return Object.keys(isObject(selector.matchLabels) ? selector.matchLabels : {}).length === 0 && asArray(selector.matchExpressions).length === 0;
}
