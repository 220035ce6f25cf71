// A set whose apply of one object fails prunes nothing, on the real test cluster: the old copy of
// a renamed object stays while the API server refuses the set's Service (an admission policy
// plays the refusal), `crownlabs diff` predicts the same, and once the refusal is lifted the next
// retry applies the Service and prunes the old copy.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { diffAgainstCluster } from '../../src/controller/dry-run-diff.ts';
import { DEFAULT_KEEP_ALIVE_MS } from '../../src/controller/controller.ts';
import { withRenderedDigest } from '../../src/controller/rendered-digest.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { FIELD_MANAGER } from '../../src/kube/objects.ts';
import type { KubeObject as RenderedObject } from '../../src/inputs/types.ts';
import { adminKubeConfig, deleteObject, getObject, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, convergedDesk, expectedObjects, liveOf, runController, type Lab, type RunningController } from './controller-support.ts';

const labs: Lab[] = [];
const running: RunningController[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.handle.stop();
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
});
afterAll(async () => {
  for (const l of labs) await cleanupLab(l);
});

describe('a failed apply', () => {
  it('holds the prune of its set back until every apply succeeds, and diff says so', async () => {
    const converged = await convergedDesk('fa', { apiVersion: 'v1', kind: 'Service' });
    const { l, config } = converged;
    labs.push(l);
    let ctl = converged.ctl;
    await ctl.handle.stop();

    // An older version's Service (same fields, no digest: applied again by this one) and the old
    // copy of a ConfigMap the set no longer renders under that name (as after a rename).
    const rendered = await expectedObjects(l, config);
    const svc = rendered.find((o) => o.kind === 'Service' && o.metadata.name === 'desk-1')! as KubeObject;
    await serverSideApply(svc, { fieldManager: FIELD_MANAGER });
    const instance = (await getObject<KubeObject & { metadata: { uid: string } }>({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { namespace: l.tenantNs, name: 'desk-1' } }))!;
    const oldCopy = withRenderedDigest([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          ...svc.metadata,
          name: 'desk-1-old-name',
          ownerReferences: [{ apiVersion: instance.apiVersion, kind: 'Instance', name: 'desk-1', uid: instance.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        data: { k: 'v' },
      } as RenderedObject,
    ])[0] as KubeObject;
    await serverSideApply(oldCopy, { fieldManager: FIELD_MANAGER });

    // The API server refuses every write of this Service.
    const policy = `${l.shard}-refuse-service`;
    const vap = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: policy },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['services'] }] },
        matchConditions: [{ name: 'this-service', expression: `object.metadata.namespace == '${l.tenantNs}' && object.metadata.name == 'desk-1'` }],
        validations: [{ expression: 'false', message: 'refused for the test' }],
      },
    } as KubeObject;
    const binding = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: policy }, spec: { policyName: policy, validationActions: ['Deny'] } } as KubeObject;
    cleanups.push(() => deleteObject(binding), () => deleteObject(vap));
    await serverSideApply([vap, binding]);
    await waitFor(
      async () => {
        try {
          await serverSideApply({ ...svc, metadata: { ...svc.metadata, labels: { ...(svc.metadata.labels as Record<string, string>), probe: 'x' } } }, { fieldManager: 'probe', dryRun: true });
          return false;
        } catch (e) {
          return /refused for the test/.test(String(e));
        }
      },
      { timeoutMs: 30_000, message: 'the policy in force' },
    );

    const diff = await diffAgainstCluster({ client: new KubeClient(adminKubeConfig()), config, keepAliveMs: DEFAULT_KEEP_ALIVE_MS, include: (o) => o.metadata.namespace === l.tenantNs });
    expect(diff.changes.filter((c) => c.action === 'prune').map((c) => c.id)).toEqual([]);
    expect(diff.errors).toEqual(expect.arrayContaining([expect.stringMatching(/^Service\/.*\/desk-1: .*refused for the test/), `ConfigMap/${l.tenantNs}/desk-1-old-name: not pruned while an apply of Instance/${l.tenantNs}/desk-1 fails`]));

    ctl = await runController(config);
    running.push(ctl);
    const key = `Instance/${l.tenantNs}/desk-1`;
    await waitFor(() => ctl.requests.some((r) => r.method === 'PATCH' && r.path.endsWith(`/services/desk-1`)), { timeoutMs: 60_000, message: 'an apply of the Service' });
    await waitFor(() => ctl.reconciled.includes(key), { timeoutMs: 30_000, message: 'a reconcile of the Instance' });
    await new Promise((r) => setTimeout(r, 2000));
    expect(await liveOf(oldCopy)).toBeDefined();
    expect(ctl.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith('/desk-1-old-name'))).toEqual([]);

    // Lifted: the retry applies the Service, then prunes the old copy.
    await deleteObject(binding);
    await waitFor(async () => !(await liveOf(oldCopy)), { timeoutMs: 90_000, message: 'the old copy pruned' });
  }, 240_000);
});
