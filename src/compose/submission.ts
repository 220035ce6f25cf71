/**
 * The content submission Job of one Instance (docs/behaviour.md §8.2), rendered on its own: the controller
 * creates it when a terminated Instance asks for a submission, outside the Instance's set so that
 * the set's prune never deletes it before its TTL does.
 */
import { App, Chart } from 'cdk8s';
import { SubmissionJob } from '../../constructs/instance/submission-job.ts';
import { TEMPLATE_REF, TENANT_REF, type Instance, type KubeObject, type OwnerReference } from '../inputs/types.ts';
import type { ComposerConfig } from '../config/config.ts';
import { submitterJobLabels } from '../model/automation.ts';
import { COMPOSER } from '../model/labels.ts';
import { submitterJobName } from '../model/naming.ts';
import { environmentChildName } from '../model/level-rendering.ts';
import type { ApiLevel } from '../inputs/api-level.ts';

export interface SubmissionJobInput {
  instance: Instance;
  /** The environment uploaded from, the only one (src/model/automation.ts singleEnvironment), and the inputs' level. */
  envName: string;
  level: ApiLevel;
  /** The environment's content destination (src/model/customization-urls.ts; checked non-empty by the caller). */
  destinationUrl: string;
  config: Pick<ComposerConfig, 'containerEnvContentUploaderImg' | 'containerEnvSidecarsTag'>;
  owner?: OwnerReference;
}

export function renderSubmissionJob(input: SubmissionJobInput): KubeObject {
  const { instance } = input;
  const app = new App();
  const chart = new Chart(app, 'submission', { namespace: instance.metadata.namespace, disableResourceNameHashes: true });
  new SubmissionJob(chart, 'job', {
    name: submitterJobName(instance.metadata.name),
    instanceName: instance.metadata.name,
    claimName: environmentChildName(instance, input.envName, 1, input.level),
    destinationUrl: input.destinationUrl,
    labels: {
      ...submitterJobLabels({ instanceName: instance.metadata.name, templateName: instance.spec[TEMPLATE_REF].name, tenantName: instance.spec[TENANT_REF].name }),
      // Ours: the controller's Job informer selects on it.
      [COMPOSER.managedByKey]: COMPOSER.managedByValue,
    },
    config: input.config,
    owner: input.owner,
  });
  return chart.toJson()[0] as KubeObject;
}
