// The test cluster's LoadBalancer peer: MetalLB's controller (started by scripts/test-cluster once
// its CRDs are served) gives a Service the address it asks for from an IPAddressPool, shares that
// address between Services of one sharing key, and refuses a port already taken on it. The public
// exposure tests lean on each of these.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNamespace, deleteNamespace, deleteObject, getObject, listObjects, serverSideApply, uniqueName, waitFor, type KubeObject } from './cluster.ts';

const IPS_KEY = 'metallb.universe.tf/loadBalancerIPs';
const SHARED_KEY = 'metallb.universe.tf/allow-shared-ip';
const ADDRESS = '172.18.1.10';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

describe("MetalLB's controller assigns LoadBalancer addresses", () => {
  const pool = { apiVersion: 'metallb.io/v1beta1', kind: 'IPAddressPool', metadata: { name: uniqueName('pool'), namespace: 'metallb-system' }, spec: { addresses: [`${ADDRESS}/32`], autoAssign: false } } as KubeObject;
  let ns = '';
  const service = (name: string, port: number): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns, annotations: { [IPS_KEY]: ADDRESS, [SHARED_KEY]: 'k' } },
    spec: { type: 'LoadBalancer', selector: { app: name }, ports: [{ name: 'p', port, targetPort: 8080 }] },
  });
  const ingress = async (name: string) => (await getObject<Any>({ apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns } }))?.status?.loadBalancer?.ingress;

  beforeAll(async () => {
    ns = await createNamespace('lb');
    await serverSideApply([pool]);
  });
  afterAll(async () => {
    await deleteNamespace(ns);
    await deleteObject(pool).catch(() => undefined);
  });

  it('two Services of one sharing key on different ports share the address; a third on a taken port is refused', async () => {
    await serverSideApply([service('a', 40000), service('b', 40001)]);
    for (const name of ['a', 'b']) {
      await waitFor(async () => (await ingress(name))?.[0]?.ip === ADDRESS, { timeoutMs: 30_000, message: `${name} assigned ${ADDRESS}` });
    }
    await serverSideApply([service('c', 40000)]);
    const refusal = await waitFor(
      async () => (await listObjects<Any>('v1', 'Event', { namespace: ns })).find((e) => e.involvedObject.name === 'c' && e.source?.component === 'metallb-controller' && e.reason === 'AllocationFailed'),
      { timeoutMs: 30_000, message: "MetalLB's AllocationFailed Event for c" },
    );
    expect(refusal.type).toBe('Warning');
    expect(refusal.message).toContain('40000');
    expect(await ingress('c')).toBeUndefined();
    // Once the port is free, the refused Service gets the address.
    await deleteObject(service('a', 40000));
    await waitFor(async () => (await ingress('c'))?.[0]?.ip === ADDRESS, { timeoutMs: 30_000, message: `c assigned ${ADDRESS} once a is gone` });
  });
});
