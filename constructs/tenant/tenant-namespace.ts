import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';

export interface TenantNamespaceProps {
  readonly name: string;
  readonly labels: Record<string, string>;
}

/** A tenant's personal namespace `tenant-<canon>` (docs/behaviour.md §5.4 row 1). */
export class TenantNamespace extends Construct {
  constructor(scope: Construct, id: string, props: TenantNamespaceProps) {
    super(scope, id);
    new k8s.KubeNamespace(this, 'namespace', { metadata: { name: props.name, labels: props.labels } });
  }
}
