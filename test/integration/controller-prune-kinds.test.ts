// The controller prunes an object of every kind a resource set can render (the list derived from
// the constructs, renderedKinds), on the real test cluster: for each kind, an object an earlier
// rendering applied under a name the set no longer renders (as a renamed object, or the
// oauth2-proxy ConfigMap of the other auth mode) is deleted once the controller, restarted as
// after a change of its configuration or version, reconciles the parent.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { renderedKinds, representativeObjects } from '../../src/compose/representative-lab.ts';
import { defaultConfig } from '../../src/config/config.ts';
import { withRenderedDigest } from '../../src/controller/rendered-digest.ts';
import { KIND_RESOURCES } from '../../src/kube/resources.ts';
import { FIELD_MANAGER } from '../../src/kube/objects.ts';
import { COMPOSER, composerLabels, LABEL, parentKey, type ParentRef } from '../../src/model/labels.ts';
import type { KubeObject as RenderedObject } from '../../src/inputs/types.ts';
import { getObject, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, convergedDesk, liveOf, runController, type Lab, type RunningController } from './controller-support.ts';

const labs: Lab[] = [];
const running: RunningController[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.handle.stop();
});
afterAll(async () => {
  for (const l of labs) await cleanupLab(l);
});

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** One rendered object of each kind, from either auth mode, with Ingresses and HTTPRoutes. */
function sampleOfEachKind(): Map<string, RenderedObject> {
  const out = new Map<string, RenderedObject>();
  for (const authMode of ['shared', 'per-instance'] as const) {
    const config = { ...defaultConfig(), authMode, exposition: 'both' as const, gatewayRef: 'gateway/representative' };
    for (const o of representativeObjects(config).objects) if (!out.has(`${o.apiVersion}/${o.kind}`)) out.set(`${o.apiVersion}/${o.kind}`, o);
  }
  return out;
}

describe('prune', () => {
  it('deletes an object of every kind a set can render once its set no longer renders it', async () => {
    const converged = await convergedDesk('pk', { apiVersion: 'apps/v1', kind: 'Deployment' });
    const { l, config } = converged;
    labs.push(l);
    let ctl = converged.ctl;
    running.push(ctl);

    const instance = (await getObject<Any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { namespace: l.tenantNs, name: 'desk-1' } }))!;
    const tenant = (await getObject<Any>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: l.tenants[0] } }))!;
    const samples = sampleOfEachKind();
    const strays: KubeObject[] = [];
    for (const { apiVersion, kind } of renderedKinds()) {
      const sample = structuredClone(samples.get(`${apiVersion}/${kind}`)!) as Any;
      const namespaced = KIND_RESOURCES[`${apiVersion}/${kind}`].namespaced;
      // Namespaced kinds as the Instance's (VMIs are mapped to it by their instance label), cluster-scoped ones as the Tenant's.
      const owner = namespaced ? instance : tenant;
      const parent: ParentRef = namespaced ? { kind: 'Instance', namespace: l.tenantNs, name: 'desk-1' } : { kind: 'Tenant', name: l.tenants[0] };
      const name = `${l.shard}-stray-${kind.toLowerCase()}`;
      sample.metadata = {
        name,
        ...(namespaced ? { namespace: l.tenantNs } : {}),
        labels: { ...composerLabels(parent), [LABEL.instance]: 'desk-1' },
        annotations: { [COMPOSER.parentAnnotation]: parentKey(parent) },
        ownerReferences: [{ apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, controller: true, blockOwnerDeletion: true }],
      };
      strays.push(withRenderedDigest([sample])[0] as KubeObject);
    }
    expect(strays.map((s) => s.kind)).toEqual(expect.arrayContaining(['ConfigMap', 'Secret', 'Deployment', 'VirtualMachine', 'VirtualMachineInstance', 'Namespace', 'ClusterRole', 'HTTPRoute']));
    running.splice(0);
    await ctl.handle.stop();
    for (const s of strays) await serverSideApply(s, { fieldManager: FIELD_MANAGER });
    ctl = await runController(config);
    running.push(ctl);

    const left = async () => {
      const out: string[] = [];
      for (const s of strays) {
        const live = await liveOf(s);
        if (live && !live.metadata.deletionTimestamp) out.push(s.kind);
      }
      return out;
    };
    await waitFor(async () => (await left()).length === 0, { timeoutMs: 90_000, message: 'every stray pruned' }).catch(async (e) => {
      throw new Error(`${(e as Error).message}; not pruned: ${(await left()).join(', ')}`);
    });
    // What the set renders stays.
    expect(await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: l.tenantNs, name: 'desk-1' } })).toBeDefined();
  }, 240_000);
});
