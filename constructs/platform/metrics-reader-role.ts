import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface MetricsReaderRoleProps {
  /** `<name>-metrics-reader`. */
  readonly name: string;
  readonly labels: Record<string, string>;
}

/** What a scraper (Prometheus's ServiceAccount) must be bound to, to read the controllers' authenticated /metrics. */
export class MetricsReaderRole extends Construct {
  constructor(scope: Construct, id: string, props: MetricsReaderRoleProps) {
    super(scope, id);
    new k8s.KubeClusterRole(this, 'role', { metadata: { name: `${props.name}-metrics-reader`, labels: props.labels }, rules: [{ nonResourceUrLs: ['/metrics'], verbs: ['get'] }] });
  }
}
