/** Registers every format and keyword the rules (and the schema conversions) use, one module per rule family. */
import type { Ajv } from 'ajv';
import { registerScalarsRules } from './scalars.ts';
import { registerMetadataRules } from './metadata.ts';
import { registerResourcesRules } from './resources.ts';
import { registerQuotasRules } from './quotas.ts';
import { registerWorkloadsRules } from './workloads.ts';
import { registerNetworkingRules } from './networking.ts';
import { registerRbacRules } from './rbac.ts';
import { registerKubevirtRules } from './kubevirt.ts';

export function registerRules(ajv: Ajv): void {
  registerScalarsRules(ajv);
  registerMetadataRules(ajv);
  registerResourcesRules(ajv);
  registerQuotasRules(ajv);
  registerWorkloadsRules(ajv);
  registerNetworkingRules(ajv);
  registerRbacRules(ajv);
  registerKubevirtRules(ajv);
}
