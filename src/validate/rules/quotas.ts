/** Resource quotas and limit ranges: the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { negativeQuantityIssues } from '../../model/api-server-rules.ts';
import { keyword, isObject, quantity, show } from './support.ts';

export function registerQuotasRules(ajv: Ajv): void {
  // ValidateResourceQuotaSpec: hard amounts are non-negative.
  keyword(ajv, 'k8sNonNegativeQuantities', (data, _s, push) => negativeQuantityIssues(data, push));

  // ValidateLimitRange: min ≤ defaultRequest ≤ default ≤ max, per resource; no defaults for Pods.
  keyword(ajv, 'k8sLimitRangeItem', (data, _s, push) => {
    if (!isObject(data)) return;
    const part = (k: string) => (isObject(data[k]) ? (data[k] as Record<string, unknown>) : {});
    if (data.type === 'Pod') {
      for (const k of ['default', 'defaultRequest']) if (Object.keys(part(k)).length) push([k], "may not be specified when `type` is 'Pod'");
    }
    // [lower, upper, the field reported, message]
    const order = [
      ['min', 'max', 'min', 'min value %1 is greater than max value %2'],
      ['min', 'defaultRequest', 'defaultRequest', 'min value %1 is greater than default request value %2'],
      ['min', 'default', 'default', 'min value %1 is greater than default value %2'],
      ['defaultRequest', 'max', 'defaultRequest', 'default request value %1 is greater than max value %2'],
      ['default', 'max', 'default', 'default value %1 is greater than max value %2'],
      ['defaultRequest', 'default', 'defaultRequest', 'default request value %1 is greater than default limit value %2'],
    ] as const;
    for (const [lo, hi, at, text] of order) {
      for (const [name, v] of Object.entries(part(lo))) {
        const a = quantity(v);
        const b = quantity(part(hi)[name]);
        if (a && b && a.cmp(b) > 0) push([at, name], text.replace('%1', a.toString()).replace('%2', b.toString()));
      }
    }
    for (const k of ['min', 'max', 'default', 'defaultRequest']) {
      for (const [name, v] of Object.entries(part(k))) {
        const q = quantity(v);
        if (q && q.sign() < 0) push([k, name], `${show(v)}: must be greater than or equal to 0`);
      }
    }
  });
}
