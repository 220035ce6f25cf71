// An in-memory stand-in for the KubeClient calls the user-pods service makes (GET, server-side
// apply, merge patch, DELETE on namespaced objects), so its HTTP face can be fuzzed without a
// cluster. Pods it creates are Ready at once, with an IP, so creations run their start jobs.
import { KubeApiError, type KubeClient, type RequestOptions } from '../../../src/kube/client.ts';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown }; [k: string]: unknown };

const clone = <T>(v: T): T => structuredClone(v);

/** `k=v`, `k!=v`, `k`, `k in (a,b)` terms, comma-separated (what the service sends). */
function matches(labels: Record<string, string> = {}, selector: string | undefined): boolean {
  if (!selector) return true;
  const terms = selector.match(/[^,(]+(?:\([^)]*\))?/g) ?? [];
  return terms.every((raw) => {
    const t = raw.trim();
    const inMatch = /^(\S+)\s+in\s+\(([^)]*)\)$/.exec(t);
    if (inMatch) return inMatch[2].split(',').map((s) => s.trim()).includes(labels[inMatch[1]]);
    const ne = /^([^!=]+)!=(.*)$/.exec(t);
    if (ne) return labels[ne[1]] !== ne[2];
    const eq = /^([^=]+)==?(.*)$/.exec(t);
    if (eq) return labels[eq[1]] === eq[2];
    return t in labels;
  });
}

export class FakeKube {
  private readonly objects = new Map<string, Obj>();
  private ips = 0;

  /** The KubeClient the service is given (only `path` and `request` are used). */
  client(): KubeClient {
    return { path: (...a: Parameters<KubeClient['path']>) => this.path(...a), request: (m: string, p: string, o?: RequestOptions) => this.request(m, p, o) } as unknown as KubeClient;
  }

  path(apiVersion: string, kind: string, namespace?: string, name?: string, sub?: string): string {
    return [apiVersion, kind, namespace ?? '', name ?? '', sub ?? ''].map(encodeURIComponent).join('|');
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    const [apiVersion, kind, namespace, name, sub] = path.split('|').map(decodeURIComponent);
    const key = `${apiVersion}|${kind}|${namespace}|${name}`;
    const notFound = () => new KubeApiError(404, { message: `${kind} "${name}" not found` }, method, path);
    if (method === 'GET' && !name) {
      const query = opts.query ?? {};
      const ip = typeof query.fieldSelector === 'string' ? /status\.podIP=(.*)/.exec(query.fieldSelector)?.[1] : undefined;
      const items = [...this.objects.values()].filter(
        (o) => o.apiVersion === apiVersion && o.kind === kind && (o.metadata.namespace ?? '') === namespace && matches(o.metadata.labels, query.labelSelector as string | undefined) && (ip === undefined || (o.status as { podIP?: string } | undefined)?.podIP === ip),
      );
      return { items: clone(items) } as T;
    }
    const existing = this.objects.get(key);
    if (method === 'GET') {
      if (!existing) throw notFound();
      return clone(existing) as T;
    }
    if (method === 'DELETE') {
      if (!existing) throw notFound();
      this.objects.delete(key);
      return clone(existing) as T;
    }
    if (method === 'PATCH' && opts.contentType === 'application/apply-patch+yaml') {
      const body = clone(opts.body) as Obj;
      if (body?.kind !== kind || body.metadata?.name !== name) throw new KubeApiError(400, { message: 'the object does not match its path' }, method, path);
      const next: Obj = { ...existing, ...body, metadata: { ...existing?.metadata, ...body.metadata } };
      if (kind === 'Pod' && !existing) next.status = { phase: 'Running', podIP: `10.1.${(this.ips >> 8) & 255}.${this.ips++ & 255}`, hostIP: '10.0.0.1', startTime: new Date(0).toISOString(), conditions: [{ type: 'Ready', status: 'True' }] };
      if (opts.query?.dryRun !== 'All') this.objects.set(key, next);
      return clone(next) as T;
    }
    if (method === 'PATCH' && opts.contentType === 'application/merge-patch+json') {
      if (!existing) throw notFound();
      const patch = opts.body as { metadata?: { annotations?: Record<string, string>; labels?: Record<string, string> } };
      if (sub !== 'status') {
        existing.metadata.annotations = { ...existing.metadata.annotations, ...patch.metadata?.annotations };
        existing.metadata.labels = { ...existing.metadata.labels, ...patch.metadata?.labels };
      }
      return clone(existing) as T;
    }
    throw new KubeApiError(405, { message: `the fake API server has no ${method} ${opts.contentType ?? ''}` }, method, path);
  }
}
