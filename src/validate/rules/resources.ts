/** Container and volume resource requirements: the API server's checks beyond the OpenAPI schemas (see ../rules.ts). */
import type { Ajv } from 'ajv';
import { resourceRequirementIssues } from '../../model/api-server-rules.ts';
import { keyword, isObject } from './support.ts';

export function registerResourcesRules(ajv: Ajv): void {
  // validateResourceRequirements / ValidateResourceQuantityValue (containers) and
  // ValidatePersistentVolumeClaimSpec's resources (`{ volume: true }`: storage only matters).
  keyword(ajv, 'k8sResourceRequirements', (data, schema, push) => resourceRequirementIssues(data, isObject(schema) && schema.volume === true, push));
}
