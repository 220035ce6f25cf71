import { describe, expect, it } from 'vitest';
import { Caches } from '../../../src/controller/caches.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';

// What the informers hand to the Inventory (the private step every watch event of an input kind takes).
type Feed = { toInventory(type: 'add' | 'update' | 'delete', obj: CachedObject): void };

describe('Caches remember why an object failed validation, for its Event', () => {
  const tenant = (email: string): CachedObject => ({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'Tenant',
    metadata: { name: 'alice', resourceVersion: '1' },
    spec: { firstName: 'A', lastName: 'B', email },
  });

  it('names the problems while the object is invalid, and forgets them once it is valid or gone', () => {
    const caches = new Caches({} as KubeClient);
    const feed = caches as unknown as Feed;
    feed.toInventory('add', tenant('not-an-email'));
    expect(caches.inventory.tenants.has('alice')).toBe(false);
    expect(caches.whyInvalid(tenant('x'))).toMatch(/^spec\.email: must match pattern/);
    feed.toInventory('update', tenant('alice@example.org'));
    expect(caches.inventory.tenants.has('alice')).toBe(true);
    expect(caches.whyInvalid(tenant('x'))).toBe('');
    feed.toInventory('update', tenant('again-not-an-email'));
    expect(caches.whyInvalid(tenant('x'))).not.toBe('');
    feed.toInventory('delete', tenant('again-not-an-email'));
    expect(caches.whyInvalid(tenant('x'))).toBe('');
  });
});
