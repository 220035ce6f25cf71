// A child kind whose CRD a cluster may lack (Gateway API's HTTPRoute with exposition "ingress"):
// its informer must not keep the controller from syncing, and must find the CRD once installed.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Informer, OPTIONAL_KIND_RECHECK_MS, type CachedObject } from '../../../src/kube/informer.ts';
import { KubeApiError, type KubeClient } from '../../../src/kube/client.ts';
import { childKinds } from '../../../src/controller/child-kinds.ts';

function client(answer: () => { items: CachedObject[] } | KubeApiError) {
  let lists = 0;
  const c = {
    path: () => '/apis/gateway.networking.k8s.io/v1/httproutes',
    request: async () => {
      lists++;
      const a = answer();
      if (a instanceof KubeApiError) throw a;
      return { metadata: { resourceVersion: '5' }, items: a.items };
    },
    watch: () => ({ stop: () => undefined }),
  } as unknown as KubeClient;
  return { c, lists: () => lists };
}

const notFound = () => new KubeApiError(404, { message: 'the server could not find the requested resource' }, 'GET', '/apis/gateway.networking.k8s.io/v1/httproutes');
const route: CachedObject = { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', metadata: { name: 'r', namespace: 'n', resourceVersion: '4' } };

afterEach(() => vi.useRealTimers());

describe('an optional informer', () => {
  it('is synced and empty while its API answers 404, reports no error, and picks the kind up once it is served', async () => {
    vi.useFakeTimers();
    let served = false;
    const { c, lists } = client(() => (served ? { items: [route] } : notFound()));
    const errors: Error[] = [];
    const inf = new Informer(c, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', optional: true, onError: (e) => errors.push(e) });
    const added: string[] = [];
    inf.on((type, o) => added.push(`${type} ${o.metadata.name}`));
    inf.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(inf.hasSynced).toBe(true);
    expect(inf.get('n', 'r')).toBeUndefined();
    expect(errors).toEqual([]);
    served = true;
    await vi.advanceTimersByTimeAsync(OPTIONAL_KIND_RECHECK_MS - 1);
    expect(lists()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(lists()).toBe(2);
    expect(inf.get('n', 'r')?.metadata.name).toBe('r');
    expect(added).toEqual(['add r']);
    inf.stop();
  });

  it('a required informer is not synced by a 404: it reports the error and retries', async () => {
    vi.useFakeTimers();
    const { c } = client(notFound);
    const errors: Error[] = [];
    const inf = new Informer(c, { apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', onError: (e) => errors.push(e) });
    inf.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(inf.hasSynced).toBe(false);
    expect(errors).toHaveLength(1);
    inf.stop();
  });

  it('the controller watches HTTPRoutes, optionally; the kinds of the core and of KubeVirt and CDI are required', () => {
    const kinds = childKinds();
    expect(kinds.find((k) => k.kind === 'HTTPRoute')).toEqual({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'HTTPRoute', optional: true });
    expect(kinds.filter((k) => k.optional).map((k) => k.kind)).toEqual(['HTTPRoute']);
  });
});
