import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

export interface MetricsServiceMonitorProps {
  /** Namespace of the ServiceMonitor. */
  readonly namespace: string;
  /** Labels of the ServiceMonitor, and the selector of the Services it scrapes. */
  readonly labels: Record<string, string>;
  /** Namespaces whose Services are scraped. */
  readonly namespaces: readonly string[];
  /** Service port of the HTTPS /metrics behind authentication (the controllers'). */
  readonly securePort: string;
}

/** Where a pod finds its own ServiceAccount token: Prometheus sends it (its account must hold the metrics-reader ClusterRole). */
const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/**
 * A prometheus-operator ServiceMonitor over every Service carrying `labels`: the controllers'
 * `securePort` over HTTPS with Prometheus's bearer token (their certificate is self-signed:
 * not verified), and the plain `metrics` port (the bastion's SSH tracker).
 */
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
        endpoints: [
          { port: props.securePort, interval: '30s', scheme: 'https', bearerTokenFile: SERVICE_ACCOUNT_TOKEN, tlsConfig: { insecureSkipVerify: true } },
          { port: 'metrics', interval: '30s' },
        ],
      },
    });
  }
}
