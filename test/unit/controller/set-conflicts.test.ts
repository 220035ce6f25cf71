// What the controller refuses before applying a set: an object another live parent holds, unless
// this set outranks it (a Tenant's over an Instance's), and a live object CrownLabs did not make.
import { describe, expect, it } from 'vitest';
import { setConflicts } from '../../../src/controller/apply-set.ts';
import type { ControllerContext } from '../../../src/controller/context.ts';
import type { CachedObject } from '../../../src/kube/informer.ts';
import type { KubeObject } from '../../../src/inputs/types.ts';

const TARGET = { key: 'crownlabs.polito.it/operator-selector', value: 'production' };
const tenant = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: 'ann', uid: 'u-tenant' } } as CachedObject;
const inst = { apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name: 'mydrive-info', namespace: 'tenant-ann', uid: 'u-inst' } } as CachedObject;
const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mydrive-info', namespace: 'tenant-ann' } } as KubeObject;
const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'tenant-ann' } } as KubeObject;
const ref = (o: CachedObject) => ({ apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, uid: o.metadata.uid!, controller: true });

function ctxWith(live: Record<string, CachedObject>): ControllerContext {
  const parents = (list: CachedObject[]) => ({ get: (namespace: string | undefined, name: string) => list.find((o) => o.metadata.name === name && o.metadata.namespace === namespace) });
  return {
    config: { targetLabel: TARGET },
    caches: {
      liveOf: (o: KubeObject) => live[`${o.kind}/${o.metadata.name}`],
      parentInformer: (kind: string) => parents(kind === 'Instance' ? [inst] : kind === 'Tenant' ? [tenant] : []),
    },
  } as unknown as ControllerContext;
}

describe('setConflicts', () => {
  const held = { Secret: { ...secret, metadata: { ...secret.metadata, ownerReferences: [ref(inst)] } } as unknown as CachedObject };
  it('a Tenant takes an object its Instance holds: no conflict, the Instance to run again', () => {
    expect(setConflicts(ctxWith({ 'Secret/mydrive-info': held.Secret }), tenant, [secret])).toEqual({ errors: [], takeovers: ['Instance/tenant-ann/mydrive-info'] });
  });

  it('an Instance is refused an object its Tenant holds, and told the Tenant takes precedence', () => {
    const live = { 'Secret/mydrive-info': { ...secret, metadata: { ...secret.metadata, ownerReferences: [ref(tenant)] } } as unknown as CachedObject };
    const { errors, takeovers } = setConflicts(ctxWith(live), inst, [secret]);
    expect(takeovers).toEqual([]);
    expect(errors.map((e) => `${e.object}: ${e.error.message}`)).toEqual([
      'Secret/tenant-ann/mydrive-info: already rendered for Tenant/ann: Tenant objects take precedence over Instance objects; rename this Instance (nothing of this set is applied)',
    ]);
  });

  it('a namespace CrownLabs did not make is a conflict; opted in, or made by the Go operators, it is not', () => {
    const plain = { ...ns, metadata: { ...ns.metadata, labels: { team: 'x' } } } as unknown as CachedObject;
    expect(setConflicts(ctxWith({ 'Namespace/tenant-ann': plain }), tenant, [ns]).errors.map((e) => e.error.message)).toEqual([
      expect.stringMatching(/^exists and was not created by CrownLabs: not adopted .*composer\.crownlabs\.polito\.it\/adopt="true"/),
    ]);
    const optedIn = { ...plain, metadata: { ...plain.metadata, annotations: { 'composer.crownlabs.polito.it/adopt': 'true' } } } as CachedObject;
    expect(setConflicts(ctxWith({ 'Namespace/tenant-ann': optedIn }), tenant, [ns]).errors).toEqual([]);
    const upstream = { ...ns, metadata: { ...ns.metadata, labels: { [TARGET.key]: TARGET.value, 'crownlabs.polito.it/type': 'tenant' } } } as unknown as CachedObject;
    expect(setConflicts(ctxWith({ 'Namespace/tenant-ann': upstream }), tenant, [ns]).errors).toEqual([]);
  });
});
