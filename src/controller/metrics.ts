/** Prometheus metrics of the controller, on their own registry (several controllers may share a process in tests). */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { API_LEVELS, type ApiLevel } from '../inputs/api-level.ts';

export class ControllerMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({ name: 'crownlabs_controller_reconciles_total', help: 'Reconciles by parent kind and result', labelNames: ['kind', 'result'] as const, registers: [this.registry] });
  readonly errors = new Counter({ name: 'crownlabs_controller_errors_total', help: 'Reconcile errors by parent kind and reason', labelNames: ['kind', 'reason'] as const, registers: [this.registry] });
  readonly queueDepth = new Gauge({ name: 'crownlabs_controller_queue_depth', help: 'Keys waiting in the work queue', registers: [this.registry] });
  readonly applies = new Counter({ name: 'crownlabs_controller_applies_total', help: 'Server-side applies sent', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly writeSkips = new Counter({ name: 'crownlabs_controller_write_skips_total', help: 'Objects not sent because the live object already holds them', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly prunes = new Counter({ name: 'crownlabs_controller_prunes_total', help: 'Owned objects deleted because they are no longer rendered', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly statusOnlyReconciles = new Counter({
    name: 'crownlabs_controller_status_only_reconciles_total',
    help: "Instance reconciles that only derived the status again (a child's status changed): nothing composed or applied",
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({ name: 'crownlabs_controller_status_writes_total', help: 'Status subresource writes', labelNames: ['kind'] as const, registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'crownlabs_controller_reconcile_duration_seconds',
    help: 'Reconcile latency',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly throttled = new Counter({ name: 'crownlabs_controller_throttled_requests_total', help: 'Requests the API server throttled (429) and the client retried after Retry-After', registers: [this.registry] });
  readonly relists = new Counter({ name: 'crownlabs_controller_relists_total', help: 'Informer (re-)lists by kind and reason', labelNames: ['kind', 'reason'] as const, registers: [this.registry] });

  /** docs/behaviour.md §8.4: whether the last activity query reached a healthy Prometheus. */
  readonly activitySourceUp = new Gauge({ name: 'crownlabs_inactivity_activity_source_up', help: '1 when the last activity query reached a healthy Prometheus that scrapes an activity source, 0 when it did not', registers: [this.registry] });
  readonly inactivitySteps = new Counter({ name: 'crownlabs_inactivity_steps_total', help: 'Inactivity steps taken: warn, stop, delete, warn-destruction, destroy', labelNames: ['step'] as const, registers: [this.registry] });
  readonly mails = new Counter({ name: 'crownlabs_mails_total', help: 'Tenant mails by kind and result (sent, failed)', labelNames: ['kind', 'result'] as const, registers: [this.registry] });

  /** docs/behaviour.md §16.2: 1 for the level of the installed CRDs, 0 for the others (all 0: they show none). */
  readonly apiLevel = new Gauge({ name: 'crownlabs_composer_api_level', help: 'API level of the installed CrownLabs CRDs, which the controller reads and writes', labelNames: ['level'] as const, registers: [this.registry] });

  setApiLevel(level: ApiLevel | undefined): void {
    for (const l of API_LEVELS) this.apiLevel.set({ level: l }, l === level ? 1 : 0);
  }

  constructor(withDefaults = false) {
    if (withDefaults) collectDefaultMetrics({ register: this.registry });
  }
}
