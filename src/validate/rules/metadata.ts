/** Object metadata and label selectors (meta/v1): the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { isLabelValue, isQualifiedName } from '../../inputs/k8s-names.ts';
import { keyword, isObject, asArray, show } from './support.ts';

export function registerMetadataRules(ajv: Ajv): void {
  // ValidateObjectMeta: ValidateLabels, ValidateAnnotations (keys, values, 256 KiB in total).
  keyword(ajv, 'k8sObjectMeta', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.labels)) {
      for (const [k, v] of Object.entries(data.labels)) {
        if (!isQualifiedName(k)) push(['labels', k], `invalid label key ${show(k)}: must be a qualified name ([prefix/]name, name at most 63 alphanumeric characters, '-', '_' or '.')`);
        if (typeof v === 'string' && !isLabelValue(v)) {
          push(['labels', k], `invalid label value ${show(v)}: at most 63 alphanumeric characters, '-', '_' or '.', starting and ending with an alphanumeric character`);
        }
      }
    }
    if (isObject(data.annotations)) {
      let size = 0;
      for (const [k, v] of Object.entries(data.annotations)) {
        if (!isQualifiedName(k.toLowerCase())) push(['annotations', k], `invalid annotation key ${show(k)}: must be a qualified name`);
        size += k.length + (typeof v === 'string' ? v.length : 0);
      }
      if (size > 256 * 1024) push(['annotations'], `too long: must have at most 262144 bytes (has ${size})`);
    }
  });

  // ValidateLabelSelector (meta/v1).
  keyword(ajv, 'k8sLabelSelector', (data, _s, push) => {
    if (!isObject(data)) return;
    if (isObject(data.matchLabels)) {
      for (const [k, v] of Object.entries(data.matchLabels)) {
        if (!isQualifiedName(k)) push(['matchLabels', k], `invalid label key ${show(k)}: must be a qualified name`);
        if (typeof v === 'string' && !isLabelValue(v)) push(['matchLabels', k], `invalid label value ${show(v)}`);
      }
    }
    asArray(data.matchExpressions).forEach((e, i) => {
      if (!isObject(e)) return;
      const values = asArray(e.values);
      if (typeof e.key === 'string' && !isQualifiedName(e.key)) push(['matchExpressions', i, 'key'], `invalid label key ${show(e.key)}`);
      if (e.operator === 'In' || e.operator === 'NotIn') {
        if (values.length === 0) push(['matchExpressions', i, 'values'], 'must be specified when `operator` is \'In\' or \'NotIn\'');
      } else if (e.operator === 'Exists' || e.operator === 'DoesNotExist') {
        if (values.length > 0) push(['matchExpressions', i, 'values'], 'may not be specified when `operator` is \'Exists\' or \'DoesNotExist\'');
      } else if (typeof e.operator === 'string') {
        push(['matchExpressions', i, 'operator'], `unsupported value ${show(e.operator)}: must be one of "DoesNotExist", "Exists", "In", "NotIn"`);
      }
    });
  });
}
