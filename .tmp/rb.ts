import { loadConfig } from '../src/config/config.ts';
import { deriveControllerRbac } from '../src/platform/derive-rbac.ts';
const { config } = loadConfig({ file: 'examples/crownlabs.config.yaml' });
for (const r of deriveControllerRbac(config, ['x']).clusterRules) console.log(r.apiGroups[0], r.resources[0], r.verbs.join(','), r.resourceNames?.join(',') ?? '');
