import { describe, expect, it } from 'vitest';
import { Caches, onlyStatusAndVersion } from '../../../src/controller/caches.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';

// The private step every watch event of an input kind takes, with the cached copy it replaces.
type Feed = { toInventory(type: 'add' | 'update' | 'delete', obj: CachedObject, old?: CachedObject): void };

const tenant = (rv: string, email: string, status?: unknown): CachedObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Tenant',
  metadata: { name: 'alice', resourceVersion: rv, labels: { a: 'b' } },
  spec: { firstName: 'A', lastName: 'B', email },
  ...(status === undefined ? {} : { status }),
});

describe('Caches: an update of the status alone is not validated again', () => {
  it('takes the new status and resourceVersion into the validated copy, sharing its spec', () => {
    const caches = new Caches({} as KubeClient);
    const feed = caches as unknown as Feed;
    const v1 = tenant('1', 'alice@example.org');
    feed.toInventory('add', v1);
    const first = caches.inventory.tenants.get('alice')!;
    const v2 = tenant('2', 'alice@example.org', { ready: true });
    feed.toInventory('update', v2, v1);
    const second = caches.inventory.tenants.get('alice')!;
    expect(second).not.toBe(first);
    expect(second.spec).toBe(first.spec); // not a new validated copy
    expect(second.metadata.resourceVersion).toBe('2');
    expect((second as { status?: unknown }).status).toEqual({ ready: true });
    // The status removed again.
    feed.toInventory('update', tenant('3', 'alice@example.org'), v2);
    expect('status' in caches.inventory.tenants.get('alice')!).toBe(false);
  });

  it('validates a spec change again (and an update whose previous copy never validated)', () => {
    const caches = new Caches({} as KubeClient);
    const feed = caches as unknown as Feed;
    const v1 = tenant('1', 'alice@example.org');
    feed.toInventory('add', v1);
    const bad = tenant('2', 'not-an-email');
    feed.toInventory('update', bad, v1);
    expect(caches.inventory.tenants.has('alice')).toBe(false);
    expect(caches.whyInvalid(bad)).toMatch(/spec\.email/);
    // Only the status changes on the invalid object: still invalid, still reported.
    feed.toInventory('update', tenant('3', 'not-an-email', { ready: true }), bad);
    expect(caches.inventory.tenants.has('alice')).toBe(false);
    expect(caches.whyInvalid(bad)).toMatch(/spec\.email/);
  });

  it('tells a status-only change from one of metadata or spec', () => {
    const v1 = tenant('1', 'a@b.org');
    expect(onlyStatusAndVersion(tenant('2', 'a@b.org', { x: 1 }), v1)).toBe(true);
    expect(onlyStatusAndVersion(tenant('2', 'c@b.org'), v1)).toBe(false);
    const relabelled = tenant('2', 'a@b.org');
    relabelled.metadata.labels = { a: 'c' };
    expect(onlyStatusAndVersion(relabelled, v1)).toBe(false);
    const finalized = tenant('2', 'a@b.org');
    finalized.metadata.finalizers = ['x'];
    expect(onlyStatusAndVersion(finalized, v1)).toBe(false);
  });
});
