/** Names shared by the webhook server and the WebhookConfigurations that point at it (docs/behaviour.md §2.1, §6). */

export const TENANT_WEBHOOK_PATHS = {
  mutate: '/mutate-v1alpha2-tenant',
  validate: '/validate-v1alpha2-tenant',
} as const;

/** The webhook entries' names, as upstream's Helm chart registers them. */
export const TENANT_WEBHOOK_NAMES = {
  mutate: 'mutate.tenant.crownlabs.polito.it',
  validate: 'validate.tenant.crownlabs.polito.it',
} as const;

/** The Instance quota webhook (docs/behaviour.md §16.6), as upstream's chart registers it. */
export const INSTANCE_WEBHOOK_PATH = '/validator-v1alpha2-instance';
export const INSTANCE_WEBHOOK_NAME = 'validate.instance.crownlabs.polito.it';
