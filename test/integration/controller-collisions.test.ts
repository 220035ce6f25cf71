// #14.10 in the controller: Instances `twin-1` and `twin.1` of one namespace render the same
// objects. The one that comes later is refused with a Warning Event and CreationLoopBackoff; it
// never writes the first one's objects, so the two reconciles do not take them from each other.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, rest, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, lab, labConfig, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('col');
const l: Lab = lab(shard);
const config = labConfig(shard);
let ctl: RunningController;

const instance = (name: string): KubeObject => ({
  apiVersion: 'crownlabs.polito.it/v1alpha2',
  kind: 'Instance',
  metadata: { name, namespace: l.tenantNs },
  spec: {
    running: true,
    'template.crownlabs.polito.it/TemplateRef': { name: 'desk', namespace: l.workspaceNs },
    'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] },
  },
});
const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'twin-1', namespace: l.tenantNs } };

beforeAll(async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config);
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  await create(l.inputs.namespaced.find((o) => o.kind === 'Template' && o.metadata.name === 'desk')!);
});

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
});

describe('controller: two Instances rendering the same objects', () => {
  it('the later one gets a Warning Event and CreationLoopBackoff, and never writes the first one\'s objects', async () => {
    const first = await create(instance('twin-1'));
    await waitFor(async () => Boolean(await getObject(deployment)), { timeoutMs: 30_000, message: 'the first Instance\'s Deployment' });
    const path = `/apis/apps/v1/namespaces/${l.tenantNs}/deployments/twin-1`;
    const writesBefore = ctl.writes().filter((r) => r.path.startsWith(path)).length;

    const second = await create(instance('twin.1'));
    const events = async () =>
      (await rest().request('GET', `/api/v1/namespaces/${l.tenantNs}/events`, { query: { fieldSelector: `involvedObject.name=twin.1,involvedObject.kind=Instance` } })).items as {
        type: string;
        reason: string;
        message: string;
      }[];
    await waitFor(async () => (await events()).some((e) => e.reason === 'EnvironmentEnforcementFailed'), { timeoutMs: 30_000, message: 'a Warning Event on twin.1' });
    const event = (await events()).find((e) => e.reason === 'EnvironmentEnforcementFailed')!;
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(`Deployment/${l.tenantNs}/twin-1: already rendered for Instance/${l.tenantNs}/twin-1`);
    await waitFor(async () => (await getObject<KubeObject & { status?: { phase?: string } }>(instance('twin.1')))?.status?.phase === 'CreationLoopBackoff', {
      timeoutMs: 30_000,
      message: 'twin.1 in CreationLoopBackoff',
    });
    // Give a fight time to happen: retries of twin.1 and resyncs of twin-1.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(ctl.writes().filter((r) => r.path.startsWith(path))).toHaveLength(writesBefore);
    const live = await getObject<KubeObject>(deployment);
    const owners = (live!.metadata as { ownerReferences?: { uid: string }[] }).ownerReferences ?? [];
    expect(owners.map((o) => o.uid)).toEqual([first.metadata.uid]);
    expect(owners.map((o) => o.uid)).not.toContain(second.metadata.uid);
  });
});
