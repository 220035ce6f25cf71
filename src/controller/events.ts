/** Kubernetes Events about a parent (failures are Warnings), written with core/v1 Events. */
import type { CachedObject } from '../kube/informer.ts';
import type { KubeClient } from '../kube/client.ts';

export class EventRecorder {
  constructor(
    private readonly client: KubeClient,
    private readonly component = 'crownlabs-composer',
  ) {}

  async record(obj: CachedObject, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    const now = new Date().toISOString();
    try {
      await this.client.request('POST', `/api/v1/namespaces/${namespace}/events`, {
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { generateName: `${obj.metadata.name}.`, namespace },
          involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: this.component },
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
        },
      });
    } catch {
      // Events are best effort.
    }
  }
}
