/** What every reconciler reads: the client, the caches, the configuration and the side channels. */
import type { Logger } from 'pino';
import type { ComposerConfig } from '../config/config.ts';
import type { KeycloakClient } from '../integrations/keycloak/index.ts';
import type { Caches } from './caches.ts';
import type { EventRecorder } from './events.ts';
import type { KubeClient } from '../kube/client.ts';
import type { ControllerMetrics } from './metrics.ts';

export const TENANT_FINALIZER = 'crownlabs.polito.it/tenant-operator';

export interface ControllerContext {
  client: KubeClient;
  caches: Caches;
  config: ComposerConfig;
  log: Logger;
  metrics: ControllerMetrics;
  events: EventRecorder;
  keycloak?: KeycloakClient;
  /** How long a personal namespace is kept after the last login (docs/behaviour.md §5.3 step 5). */
  tenantNsKeepAliveMs: number;
  now: () => number;
  /** Adds a key to the work queue (set by the controller once its queue exists). */
  enqueue?: (key: string) => void;
}

export interface ReconcileResult {
  requeueAfterMs?: number;
}
