import * as k8s from 'cdk8s-plus-27/lib/imports/k8s.js';
import { Construct } from 'constructs';
import { TENANT_NAMESPACE_OBJECT_NAMES } from '../../src/model/naming.ts';
import type { QuotaValues } from '../../src/model/tenant-plan.ts';

export const TENANT_QUOTA_NAME = TENANT_NAMESPACE_OBJECT_NAMES.quota;

export interface TenantQuotaProps {
  readonly namespace: string;
  readonly labels: Record<string, string>;
  readonly quota: QuotaValues;
}

/**
 * The personal namespace's ResourceQuota (docs/behaviour.md §5.4 row 2): limits = requests, plus the
 * Instance count; at e62be9e also `requests.storage` and each other resource under its own key (§16.4).
 */
export class TenantQuota extends Construct {
  constructor(scope: Construct, id: string, props: TenantQuotaProps) {
    super(scope, id);
    const { cpu, memory, instances, storage, other } = props.quota;
    const extra: Record<string, k8s.Quantity> = {};
    if (storage !== undefined) extra['requests.storage'] = k8s.Quantity.fromString(storage);
    for (const [k, v] of Object.entries(other ?? {})) extra[k] = k8s.Quantity.fromString(v);
    new k8s.KubeResourceQuota(this, 'quota', {
      metadata: { name: TENANT_QUOTA_NAME, namespace: props.namespace, labels: props.labels },
      spec: {
        hard: {
          'limits.cpu': k8s.Quantity.fromString(cpu),
          'requests.cpu': k8s.Quantity.fromString(cpu),
          'limits.memory': k8s.Quantity.fromString(memory),
          'requests.memory': k8s.Quantity.fromString(memory),
          'count/instances.crownlabs.polito.it': k8s.Quantity.fromString(String(instances)),
          ...extra,
        },
      },
    });
  }
}
