import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

export interface MetricsServiceMonitorProps {
  /** Namespace of the ServiceMonitor. */
  readonly namespace: string;
  /** Labels of the ServiceMonitor, and the selector of the Services it scrapes. */
  readonly labels: Record<string, string>;
  /** Namespaces whose Services are scraped. */
  readonly namespaces: readonly string[];
}

/** A prometheus-operator ServiceMonitor scraping the `metrics` port of every Service carrying `labels` (controllers, bastion tracker). */
export class MetricsServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, props: MetricsServiceMonitorProps) {
    super(scope, id);
    new ApiObject(this, 'service-monitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: 'crownlabs-composer', namespace: props.namespace, labels: props.labels },
      spec: {
        selector: { matchLabels: props.labels },
        namespaceSelector: { matchNames: [...props.namespaces] },
        endpoints: [{ port: 'metrics', interval: '30s' }],
      },
    });
  }
}
