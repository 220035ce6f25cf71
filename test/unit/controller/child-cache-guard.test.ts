// What tenants write never reaches the controller's child caches, and a cached Secret holds digests,
// not data: a student creating labelled objects in her sandbox cannot grow the controller's memory
// or have it reconcile a parent she names (docs/behaviour.md §0.8).
import { describe, expect, it } from 'vitest';
import { Caches, myDriveInfoProjection, SECRET_PAGE_SIZE } from '../../../src/controller/caches.ts';
import { keptAsChild, renderingParent } from '../../../src/controller/child-guard.ts';
import { childEventRequest } from '../../../src/controller/child-events.ts';
import { liveHoldsRendered } from '../../../src/controller/live-compare.ts';
import { DATA_DIGESTS, secretDigestProjection } from '../../../src/controller/secret-digest.ts';
import { Informer, type CachedObject } from '../../../src/kube/informer.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { compose, renderUnit } from '../../../src/compose/compose.ts';
import { renderSubmissionJob } from '../../../src/compose/submission.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const PARENT = 'composer.crownlabs.polito.it/parent';
const MANAGED = { 'app.kubernetes.io/managed-by': 'crownlabs-composer' };
const guard = { mydrivePvcsNamespace: 'mydrive-pvcs' };

function obj(kind: string, namespace: string | undefined, parent: string | undefined, extra: Record<string, unknown> = {}): CachedObject {
  return {
    apiVersion: kind === 'Deployment' ? 'apps/v1' : 'v1',
    kind,
    metadata: { name: 'x', namespace, resourceVersion: '1', labels: { ...MANAGED }, annotations: parent ? { [PARENT]: parent } : {} },
    ...extra,
  };
}

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

/** A client whose list answers with `items` (recording the queries) and whose watch hands its callback out. */
function fakeClient(items: () => CachedObject[]) {
  const queries: Record<string, unknown>[] = [];
  let onEvent: (e: { type: string; object: unknown }) => void = () => undefined;
  const client = {
    path: () => '/api/v1/secrets',
    request: async (_m: string, _p: string, o: { query: Record<string, unknown> }) => {
      queries.push(o.query);
      return { metadata: { resourceVersion: '10' }, items: items().map((i) => structuredClone(i)) };
    },
    watch: (_p: string, _q: unknown, ev: typeof onEvent) => {
      onEvent = ev;
      return { stop: () => undefined };
    },
  } as unknown as KubeClient;
  return { client, queries, send: (type: string, object: CachedObject) => onEvent({ type, object: structuredClone(object) }) };
}

describe('renderingParent: which watched objects can be children', () => {
  it('keeps every object the controller renders for the example lab and a generated one', () => {
    const config = testConfig({});
    const generated = Inventory.fromObjects(generateLab({ instances: 30, tenants: 6, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } }))).inventory;
    let n = 0;
    for (const inventory of [generated, loadInventory(['examples/lab']).inventory]) {
      for (const unit of compose(inventory, config).units) {
        for (const o of renderUnit(unit) as unknown as CachedObject[]) {
          n++;
          expect(renderingParent(o, config), `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).toBe(o.metadata.annotations?.[PARENT]);
        }
      }
    }
    expect(n).toBeGreaterThan(200);
  });

  it('refuses what a tenant can write in her sandbox, whatever parent it names', () => {
    for (const kind of ['Secret', 'Deployment', 'Service', 'PersistentVolumeClaim', 'NetworkPolicy', 'Ingress', 'Job', 'VirtualMachine']) {
      expect(renderingParent(obj(kind, 'sandbox-alice', 'Tenant/alice'), guard), kind).toBeUndefined();
      expect(renderingParent(obj(kind, 'sandbox-alice', 'Instance/sandbox-alice/x'), guard), kind).toBeUndefined();
      expect(renderingParent(obj(kind, 'sandbox-alice', 'Instance/tenant-bob/x'), guard), kind).toBeUndefined();
    }
    const vmi = { ...obj('VirtualMachineInstance', 'sandbox-alice', undefined), metadata: { name: 'x', namespace: 'sandbox-alice', labels: { 'crownlabs.polito.it/instance': 'x' } } };
    expect(renderingParent(vmi, guard)).toBeUndefined();
    // The three objects the Tenant renders there are kept, by kind and name: not others of their kinds.
    for (const [kind, name] of [['RoleBinding', 'sandbox-editor'], ['ResourceQuota', 'sandbox-resource-quota'], ['LimitRange', 'sandbox-limit-range']]) {
      const o = obj(kind!, 'sandbox-alice', 'Tenant/alice');
      expect(renderingParent(o, guard)).toBeUndefined();
      o.metadata.name = name!;
      expect(renderingParent(o, guard)).toBe('Tenant/alice');
      expect(renderingParent({ ...o, metadata: { ...o.metadata, annotations: { [PARENT]: 'Tenant/bob' } } }, guard)).toBeUndefined();
    }
  });

  it('refuses a parent in another namespace than its set renders into, unknown kinds and malformed keys', () => {
    expect(renderingParent(obj('Secret', 'tenant-bob', 'Instance/tenant-alice/x'), guard)).toBeUndefined();
    expect(renderingParent(obj('Secret', 'tenant-bob', 'Tenant/alice'), guard)).toBeUndefined();
    expect(renderingParent(obj('RoleBinding', 'workspace-b', 'Workspace/a'), guard)).toBeUndefined();
    expect(renderingParent(obj('Secret', 'tenant-alice', 'Platform/x'), guard)).toBeUndefined();
    expect(renderingParent(obj('Secret', 'tenant-alice', 'Instance/tenant-alice'), guard)).toBeUndefined();
    expect(renderingParent(obj('Secret', 'tenant-alice', 'Tenant/'), guard)).toBeUndefined();
    expect(renderingParent(obj('Secret', 'tenant-alice', undefined), guard)).toBeUndefined();
    expect(renderingParent(obj('PersistentVolumeClaim', 'mydrive-pvcs', 'Tenant/alice.b'), guard)).toBe('Tenant/alice.b');
    expect(renderingParent(obj('Secret', 'tenant-alice-b', 'Tenant/alice.b'), guard)).toBe('Tenant/alice.b');
  });
});

describe('child events', () => {
  const exists = new Set(['Instance/tenant-alice/desk', 'Tenant/alice']);
  const scope = { guard, parentExists: (k: string) => exists.has(k) };

  it('an object naming a parent that does not render it, or no such parent, enqueues nothing', () => {
    expect(childEventRequest('add', obj('Secret', 'sandbox-alice', 'Tenant/alice'), undefined, false, scope)).toBeUndefined();
    expect(childEventRequest('add', obj('Secret', 'sandbox-alice', 'Instance/tenant-alice/desk'), undefined, false, scope)).toBeUndefined();
    expect(childEventRequest('delete', obj('Deployment', 'tenant-bob', 'Instance/tenant-alice/desk'), undefined, false, scope)).toBeUndefined();
    expect(childEventRequest('add', obj('Secret', 'tenant-alice', 'Instance/tenant-alice/ghost'), undefined, false, scope)).toBeUndefined();
    expect(childEventRequest('add', obj('Secret', 'tenant-alice', 'Instance/tenant-alice/desk'), undefined, false, scope)).toEqual({ key: 'Instance/tenant-alice/desk', light: false });
  });
});

describe('the child informers', () => {
  it('never keep a refused object, and drop one that stops being accepted as a delete of the cached copy', async () => {
    const forged = obj('Secret', 'sandbox-alice', 'Tenant/alice', { data: { k: b64('v') } });
    const ours = obj('Secret', 'tenant-alice', 'Tenant/alice', { data: { k: b64('v') } });
    ours.metadata.name = 'ours';
    const f = fakeClient(() => [forged, ours]);
    const caches = new Caches(f.client, { childGuard: guard });
    const secrets = caches.child('v1', 'Secret')!;
    const events: string[] = [];
    secrets.on((type, o) => events.push(`${type} ${o.metadata.namespace}/${o.metadata.name} ${o.metadata.annotations?.[PARENT]}`));
    secrets.start();
    await secrets.synced;
    expect(secrets.list().map((o) => o.metadata.name)).toEqual(['ours']);
    expect(f.queries[0]).toMatchObject({ limit: SECRET_PAGE_SIZE, labelSelector: 'app.kubernetes.io/managed-by=crownlabs-composer' });
    f.send('ADDED', { ...forged, metadata: { ...forged.metadata, name: 'y', resourceVersion: '11' } });
    f.send('MODIFIED', { ...ours, metadata: { ...ours.metadata, resourceVersion: '12', annotations: { [PARENT]: 'Tenant/bob' } } });
    expect(secrets.list()).toEqual([]);
    expect(events).toEqual(['add tenant-alice/ours Tenant/alice', 'delete tenant-alice/ours Tenant/alice']);
  });

  it('keep a Secret as its metadata, type and a digest of each data key', async () => {
    const big = 'x'.repeat(900 * 1024);
    const secret = obj('Secret', 'tenant-alice', 'Tenant/alice', { type: 'Opaque', data: { big: b64(big), small: b64('v') } });
    const f = fakeClient(() => [secret]);
    const caches = new Caches(f.client, { childGuard: guard });
    const secrets = caches.child('v1', 'Secret')!;
    secrets.start();
    await secrets.synced;
    const kept = secrets.get('tenant-alice', 'x')!;
    expect(kept.data).toBeUndefined();
    expect(kept.type).toBe('Opaque');
    expect(Object.keys(kept[DATA_DIGESTS] as object)).toEqual(['big', 'small']);
    expect(JSON.stringify(kept).length).toBeLessThan(1000);
    // The answer to our own apply is kept the same way.
    secrets.noteWritten({ ...secret, metadata: { ...secret.metadata, resourceVersion: '20' } });
    expect(secrets.get('tenant-alice', 'x')!.data).toBeUndefined();
  });

  it('keep of a mydrive-info Secret only its server-name and path, and not a value too long to be one', () => {
    const s = obj('Secret', 'sandbox-alice', undefined, { data: { 'server-name': b64('nfs'), path: b64('x'.repeat(5000)), other: b64('y') } });
    expect(myDriveInfoProjection(s).data).toEqual({ 'server-name': b64('nfs') });
  });
});

describe('drift of a rendered Secret, against its cached digests', () => {
  const rendered = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x', namespace: 'tenant-alice' }, type: 'Opaque', stringData: { token: 'abc' }, data: { raw: b64('raw') } };
  const live = (data: Record<string, string>) => secretDigestProjection(obj('Secret', 'tenant-alice', 'Tenant/alice', { type: 'Opaque', data }));

  it('holds when the live data equals what is rendered (stringData compared as bytes), also with keys of others', () => {
    expect(liveHoldsRendered(rendered, live({ token: b64('abc'), raw: b64('raw') }))).toBe(true);
    expect(liveHoldsRendered(rendered, live({ token: b64('abc'), raw: b64('raw'), added: b64('by someone') }))).toBe(true);
  });

  it('does not hold when a value changed or a key is missing', () => {
    expect(liveHoldsRendered(rendered, live({ token: b64('abd'), raw: b64('raw') }))).toBe(false);
    expect(liveHoldsRendered(rendered, live({ raw: b64('raw') }))).toBe(false);
    expect(liveHoldsRendered({ ...rendered, type: 'kubernetes.io/tls' }, live({ token: b64('abc'), raw: b64('raw') }))).toBe(false);
  });

  it('still compares a full live Secret (a GET, as `crownlabs diff` reads) by its data', () => {
    const full = obj('Secret', 'tenant-alice', 'Tenant/alice', { type: 'Opaque', data: { token: b64('abc'), raw: b64('raw') } });
    expect(liveHoldsRendered(rendered, full)).toBe(true);
    expect(liveHoldsRendered(rendered, { ...full, data: { token: b64('abd'), raw: b64('raw') } })).toBe(false);
  });
});

describe('Informer pages', () => {
  it('lists in pages of pageSize', async () => {
    const f = fakeClient(() => []);
    const inf = new Informer(f.client, { apiVersion: 'v1', kind: 'Secret', pageSize: 7 });
    inf.start();
    await inf.synced;
    expect(f.queries[0]!.limit).toBe(7);
  });

  it('keeps the submitter Jobs the controller creates beside an Instance\'s set, not one in a sandbox', () => {
    const instance = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'i', namespace: 'tenant-alice', uid: 'u-1' }, spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 't', namespace: 'workspace-w' }, 'tenant.crownlabs.polito.it/TenantRef': { name: 'alice' } } } as never;
    const job = renderSubmissionJob({ instance, envName: 'env', level: '2e8aeb9', destinationUrl: 'https://upload.example/x', config: testConfig(), owner: { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', name: 'i', uid: 'u-1', controller: true, blockOwnerDeletion: true } }) as unknown as CachedObject;
    expect(job.metadata.ownerReferences?.length).toBe(1);
    expect(keptAsChild(job, guard)).toBe(true);
    expect(keptAsChild({ ...job, metadata: { ...job.metadata, namespace: 'sandbox-alice' } }, guard)).toBe(false);
    expect(keptAsChild({ ...job, metadata: { ...job.metadata, ownerReferences: [] } }, guard)).toBe(false);
  });
});
