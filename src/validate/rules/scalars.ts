/** Formats, quantities, int-or-string and ports: the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { QUANTITY_PATTERN } from '../../inputs/schema-validator.ts';
import { isPortName } from '../../inputs/k8s-names.ts';
import { FORMATS } from '../../model/api-server-rules.ts';
import { isObject, isResourceQuantity, keyword, show } from './support.ts';

export function registerScalarsRules(ajv: Ajv): void {
  for (const [name, f] of Object.entries(FORMATS)) ajv.addFormat(name, { type: 'string', validate: f.validate });

  // Built-in `resource.Quantity` (a string or a JSON number, parsed like Go does).
  keyword(ajv, 'k8sResourceQuantity', (data, _s, push) => {
    if (!isResourceQuantity(data)) push([], `${show(data)} is not a valid quantity (such as 500m, 2, 4Gi, 1e3)`);
  });
  // CRD `x-kubernetes-int-or-string` with the quantity pattern (as in src/inputs/schema-validator.ts).
  keyword(ajv, 'k8sQuantity', (data, _s, push) => {
    const ok = (typeof data === 'number' && Number.isInteger(data)) || (typeof data === 'string' && QUANTITY_PATTERN.test(data));
    if (!ok) push([], `${show(data)} is not a valid quantity (an integer or a string such as 500m, 2, 4Gi)`);
  });
  // `intstr.IntOrString`: an integer or a string; `'int32'` for the built-in type (CRDs'
  // `x-kubernetes-int-or-string` takes any integer).
  keyword(ajv, 'k8sIntOrString', (data, schema, push) => {
    const int32 = schema === 'int32';
    const ok = (typeof data === 'number' && Number.isInteger(data) && (!int32 || Math.abs(data) < 2 ** 31)) || typeof data === 'string';
    if (!ok) push([], `${show(data)} must be an integer${int32 ? ' (int32)' : ''} or a string`);
  });
  // validatePortNumOrName; `{ allowZero: true }` where defaulting replaces 0/"" (Service targetPort).
  keyword(ajv, 'k8sPortOrName', (data, schema, push) => {
    const allowZero = isObject(schema) && schema.allowZero === true;
    if (allowZero && (data === 0 || data === '')) return;
    if (typeof data === 'number') {
      if (!Number.isInteger(data) || data < 1 || data > 65535) push([], `${show(data)}: must be between 1 and 65535, inclusive`);
    } else if (typeof data === 'string') {
      if (!isPortName(data)) push([], `${show(data)}: ${FORMATS['k8s-port-name'].message}`);
    }
  });
  // IsValidPortNum.
  keyword(ajv, 'k8sPortNumber', (data, schema, push) => {
    if (typeof data !== 'number') return;
    if (isObject(schema) && schema.allowZero === true && data === 0) return;
    if (!Number.isInteger(data) || data < 1 || data > 65535) push([], `${show(data)}: must be between 1 and 65535, inclusive`);
  });
}
