// What applySet sends for a set: an apply for every object whose live copy lacks a rendered field
// or the digest of what is rendered now, and prunes only of objects it owns, only once every apply
// of the set succeeded.
import { describe, expect, it } from 'vitest';
import { applySet, pruneCandidates } from '../../../src/controller/apply-set.ts';
import type { ControllerContext } from '../../../src/controller/context.ts';
import { RENDERED_DIGEST_LABEL, renderedDigest, withRenderedDigest } from '../../../src/controller/rendered-digest.ts';
import { Informer, type CachedObject } from '../../../src/kube/informer.ts';
import { KubeApiError, type KubeClient } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';
import { composerLabels, parentKey, type ParentRef } from '../../../src/model/labels.ts';

const PARENT: ParentRef = { kind: 'Instance', namespace: 'tenant-ann', name: 'desk' };
const OTHER: ParentRef = { kind: 'Instance', namespace: 'tenant-ann', name: 'lab' };
const owner = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'desk', namespace: 'tenant-ann', uid: 'u-desk' } } as CachedObject;
const ownerRef = (uid: string) => ({ apiVersion: owner.apiVersion, kind: 'Instance', name: 'desk', uid, controller: true, blockOwnerDeletion: true });

/** A rendered object of `parent` (its labels and annotation, as renderUnit adds them). */
function rendered(kind: 'Secret' | 'ConfigMap' | 'Deployment', name: string, extra: Record<string, unknown> = {}, parent = PARENT): KubeObject {
  const { metadata, ...rest } = extra as { metadata?: { annotations?: Record<string, string> } };
  return {
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    metadata: { name, namespace: parent.namespace, labels: composerLabels(parent), annotations: { 'composer.crownlabs.polito.it/parent': parentKey(parent), ...metadata?.annotations } },
    ...rest,
  } as KubeObject;
}

/** A live object as the server holds it: what was applied (with its digest unless told not to) and an owner. */
function live(obj: KubeObject, o: { uid?: string | null; digest?: boolean; deleting?: boolean } = {}): CachedObject {
  const [withDigest] = o.digest === false ? [obj] : withRenderedDigest([obj]);
  const meta = { ...withDigest.metadata, resourceVersion: '5', uid: `u-${obj.metadata.name}` } as CachedObject['metadata'];
  if (o.uid !== null) meta.ownerReferences = [ownerRef(o.uid ?? owner.metadata.uid!)];
  if (o.deleting) meta.deletionTimestamp = '2026-01-01T00:00:00Z';
  const { stringData, ...rest } = withDigest as KubeObject & { stringData?: Record<string, string> };
  // The server keeps a Secret's stringData as base64 data.
  const data = stringData && { data: Object.fromEntries(Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) };
  return { ...rest, ...data, metadata: meta } as CachedObject;
}

/** A server behind the calls applySet and the informers make; `failApply` names objects whose apply is refused. */
function server(objects: CachedObject[], failApply: string[] = []) {
  const calls: string[] = [];
  const applied: Record<string, unknown>[] = [];
  const client = {
    path: (apiVersion: string, kind: string, ns?: string, name?: string) => [apiVersion, kind, ns, name].filter(Boolean).join('/'),
    async request(method: string, path: string, opts: { body?: Record<string, unknown> } = {}) {
      if (method === 'GET') {
        const items = objects.filter((o) => path === `${o.apiVersion}/${o.kind}`);
        return { metadata: { resourceVersion: '10' }, items: structuredClone(items) };
      }
      calls.push(`${method} ${path}`);
      if (method === 'PATCH') {
        if (failApply.some((n) => path.endsWith(`/${n}`))) throw new KubeApiError(422, { message: 'refused' }, method, path);
        applied.push(opts.body!);
        return { ...opts.body, metadata: { ...(opts.body!.metadata as object), resourceVersion: '11' } };
      }
      return {};
    },
    watch: () => ({ stop: () => undefined }),
  } as unknown as KubeClient;
  return { client, calls, applied };
}

async function contextFor(objects: CachedObject[], failApply: string[] = []) {
  const s = server(objects, failApply);
  const children = new Map<string, Informer>();
  for (const [apiVersion, kind] of [
    ['v1', 'Secret'],
    ['v1', 'ConfigMap'],
    ['apps/v1', 'Deployment'],
  ]) {
    const inf = new Informer(s.client, { apiVersion, kind });
    inf.start();
    await inf.synced;
    children.set(`${apiVersion}/${kind}`, inf);
  }
  const none = { get: () => undefined };
  const caches = {
    children,
    liveOf: (o: KubeObject) => children.get(`${o.apiVersion}/${o.kind}`)?.get(o.metadata.namespace, o.metadata.name),
    informerOf: (apiVersion: string, kind: string) => children.get(`${apiVersion}/${kind}`),
    write: <T>(o: KubeObject, send: () => Promise<T>) => children.get(`${o.apiVersion}/${o.kind}`)!.write(o.metadata.namespace, o.metadata.name, send),
    parentInformer: (kind: string) => (kind === 'Instance' ? { get: () => owner } : none),
  };
  const counter = { inc: () => undefined };
  const ctx = {
    client: s.client,
    caches,
    config: { targetLabel: { key: 'crownlabs.polito.it/operator-selector', value: 'production' } },
    log: { debug: () => undefined },
    metrics: { writeSkips: counter, applies: counter, prunes: counter },
  } as unknown as ControllerContext;
  for (const inf of children.values()) inf.stop();
  return { ctx, caches, ...s };
}

describe('applySet: what it applies', () => {
  const env = rendered('Deployment', 'desk', { spec: { template: { spec: { containers: [{ name: 'c', env: [{ name: 'A', value: '1' }] }] } } } });

  it('sends nothing when the live object holds what is rendered and its digest', async () => {
    const { ctx, calls } = await contextFor([live(env)]);
    const out = await applySet(ctx, PARENT, owner, [env]);
    expect(calls).toEqual([]);
    expect(out).toMatchObject({ applied: 0, skipped: 1, pruned: 0, errors: [] });
  });

  it('applies when a field is no longer rendered, although the live object still holds every rendered one', async () => {
    const before = rendered('Secret', 'auth', { metadata: { annotations: { 'nginx.ingress.kubernetes.io/auth-url': 'https://auth.example' } }, stringData: { k: 'v' } });
    const after = rendered('Secret', 'auth', { stringData: { k: 'v' } });
    const { ctx, calls, applied } = await contextFor([live(before)]);
    await applySet(ctx, PARENT, owner, [after]);
    expect(calls).toEqual(['PATCH v1/Secret/tenant-ann/auth']);
    const meta = applied[0].metadata as { annotations: Record<string, string>; labels: Record<string, string> };
    expect(meta.annotations).toEqual({ 'composer.crownlabs.polito.it/parent': 'Instance/tenant-ann/desk' });
    expect(meta.labels[RENDERED_DIGEST_LABEL]).toBe(renderedDigest(after));
    expect(renderedDigest(after)).not.toBe(renderedDigest(before));
  });

  it('applies once to a live object without a digest (made by the Go operators or an older version)', async () => {
    const { ctx, calls } = await contextFor([live(env, { digest: false })]);
    await applySet(ctx, PARENT, owner, [env]);
    expect(calls).toEqual(['PATCH apps/v1/Deployment/tenant-ann/desk']);
  });

  it('the digest is of the object as rendered: the same for the same object whatever its key order, another when one value differs', () => {
    const a = rendered('ConfigMap', 'x', { data: { a: '1', b: '2' } });
    const b = { ...a, data: { b: '2', a: '1' } } as KubeObject;
    expect(renderedDigest(a)).toBe(renderedDigest(b));
    expect(renderedDigest(withRenderedDigest([a])[0])).toBe(renderedDigest(a));
    expect(renderedDigest({ ...a, data: { a: '1', b: '3' } } as KubeObject)).not.toBe(renderedDigest(a));
    // A label value: at most 63 characters.
    expect(renderedDigest(a)).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('applySet: when it prunes', () => {
  const renamed = rendered('Secret', 'new-name', { stringData: { k: 'v' } });
  const oldCopy = live(rendered('Secret', 'old-name', { stringData: { k: 'v' } }));

  it('prunes the old copy of a renamed object once the new one is applied', async () => {
    const { ctx, calls } = await contextFor([oldCopy]);
    const out = await applySet(ctx, PARENT, owner, [renamed]);
    expect(calls).toEqual(['PATCH v1/Secret/tenant-ann/new-name', 'DELETE v1/Secret/tenant-ann/old-name']);
    expect(out).toMatchObject({ applied: 1, pruned: 1, errors: [] });
  });

  it('prunes nothing when an apply of the set failed: the old copy stays', async () => {
    const other = rendered('ConfigMap', 'kept', { data: { a: '1' } });
    const { ctx, calls } = await contextFor([oldCopy], ['new-name']);
    const out = await applySet(ctx, PARENT, owner, [renamed, other]);
    expect(calls).toEqual(['PATCH v1/Secret/tenant-ann/new-name', 'PATCH v1/ConfigMap/tenant-ann/kept']);
    expect(out.pruned).toBe(0);
    expect(out.errors.map((e) => e.object)).toEqual(['Secret/tenant-ann/new-name']);
  });

  it('a rendered object being deleted does not hold prunes back (it may be waiting for them)', async () => {
    const claim = rendered('Secret', 'held', { stringData: { k: 'v' } });
    const { ctx, calls } = await contextFor([live(claim, { deleting: true }), oldCopy]);
    const out = await applySet(ctx, PARENT, owner, [claim]);
    expect(calls).toEqual(['DELETE v1/Secret/tenant-ann/old-name']);
    expect(out).toMatchObject({ terminating: 1, pruned: 1 });
  });
});

describe('pruneCandidates: never an object that is not ours to prune', () => {
  const wanted = new Set(['Secret/tenant-ann/rendered']);
  const ours = live(rendered('Secret', 'ours', { stringData: { k: 'v' } }));
  const cases: [string, CachedObject][] = [
    ['labelled as ours but owned by nobody', live(rendered('Secret', 'unowned'), { uid: null })],
    ['labelled as ours, owned by an earlier object of the same name (another uid)', live(rendered('ConfigMap', 'earlier'), { uid: 'u-earlier-desk' })],
    ['owned by us but labelled with another set', live(rendered('Secret', 'other-set', {}, OTHER))],
    ['still rendered', live(rendered('Secret', 'rendered'))],
    ['being deleted', live(rendered('Deployment', 'going'), { deleting: true })],
  ];

  it.each(cases)('not %s', async (_what, obj) => {
    const { caches } = await contextFor([ours, obj]);
    expect(pruneCandidates(caches, PARENT, owner, wanted).map((o) => o.metadata.name)).toEqual(['ours']);
  });

  it('every object of the set it owns and no longer renders, of every kind, each once', async () => {
    const more = [live(rendered('ConfigMap', 'proxy')), live(rendered('Deployment', 'desk'))];
    const { caches } = await contextFor([ours, ...more, ...cases.map(([, o]) => o)]);
    // An informer registered under two keys (as Namespaces are) is listed once.
    caches.children.set('v1/SecretAlias', caches.children.get('v1/Secret')!);
    expect(
      pruneCandidates(caches, PARENT, owner, wanted)
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual(['ConfigMap/proxy', 'Deployment/desk', 'Secret/ours']);
  });

  it('an ownerReference among others counts (the uid, wherever it is)', async () => {
    const shared = live(rendered('Secret', 'shared'));
    shared.metadata.ownerReferences = [{ ...ownerRef('u-someone'), controller: false }, { ...ownerRef(owner.metadata.uid!), controller: false }];
    const { caches } = await contextFor([shared]);
    expect(pruneCandidates(caches, PARENT, owner, wanted).map((o) => o.metadata.name)).toEqual(['shared']);
  });
});
