// The controller's fan-out reads the dependency index each reconcile fills with the keys it looked
// up (#18 item 3): an edit of a workspace manager Tenant re-reconciles the Instances of that
// workspace, and a Template created after its Instance gets the Instance reconciled at once, not
// at its next back-off retry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, listObjects, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, FLAVOURS, lab, labConfig, liveOf, patch, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const shard = shardName('fan');
const l: Lab = lab(shard);
const config = labConfig(shard);
let ctl: RunningController;
/** Every reconcile the controller ran: key, outcome, when. */
const runs: { key: string; outcome: string; at: number }[] = [];
const inst = (name: string) => ({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Instance', metadata: { name, namespace: l.tenantNs } });

beforeAll(async () => {
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of l.inputs.cluster) await create(o);
  ctl = await runController(config, { onReconcile: (key, outcome) => runs.push({ key, outcome, at: Date.now() }) });
  await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), {
    timeoutMs: 30_000,
    message: 'tenant and workspace namespaces',
  });
  for (const o of l.inputs.namespaced) await create(o);
  await waitFor(async () => (await getObject<any>(inst('app-1')))?.status?.phase !== undefined, { timeoutMs: 30_000, message: 'instances reconciled' });
  await ctl.handle.idle();
});

afterAll(async () => {
  await ctl?.handle.stop();
  await cleanupLab(l);
});

describe('controller fan-out through the dependency index', () => {
  it('an edit of a workspace manager Tenant re-reconciles every Instance of that workspace, owned by another Tenant', async () => {
    const bob = l.tenants[1]; // manager of the lab's workspace; every Instance is alice's
    const key = 'ssh-ed25519 AAAAbobsnewkey bob@new-laptop';
    const since = runs.length;
    await patch({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'Tenant', metadata: { name: bob } }, { spec: { publicKeys: ['ssh-ed25519 AAAAbob bob@laptop', key] } });
    // The VMs' cloud-init carries the managers' keys (docs/behaviour.md §7.4).
    await waitFor(
      async () => {
        const secrets = await listObjects<KubeObject>('v1', 'Secret', { namespace: l.tenantNs });
        const userdata = (name: string) => Buffer.from(String((secrets.find((s) => s.metadata.name === name)?.data as Record<string, string> | undefined)?.userdata ?? ''), 'base64').toString();
        return userdata('vm-1').includes('AAAAbobsnewkey') && userdata('pvm-1').includes('AAAAbobsnewkey');
      },
      { timeoutMs: 30_000, message: "the manager's new key in the VMs' cloud-init" },
    );
    await ctl.handle.idle();
    const after = new Set(runs.slice(since).filter((r) => r.outcome === 'success').map((r) => r.key));
    for (const f of FLAVOURS) expect(after).toContain(`Instance/${l.tenantNs}/${f.name}-1`);
  });

  it('a Template created after its Instance gets the Instance reconciled by the fan-out, not by the back-off retry', async () => {
    const own = `Instance/${l.tenantNs}/late-1`;
    await create({
      ...inst('late-1'),
      spec: { 'template.crownlabs.polito.it/TemplateRef': { name: 'late', namespace: l.workspaceNs }, 'tenant.crownlabs.polito.it/TenantRef': { name: l.tenants[0] } },
    });
    // Eight failed reconciles (TemplateNotFound): the next retry is 12.8 s (+ up to 20%) after the last,
    // so a success within 10 s is the fan-out's, even on a machine loaded by the whole suite.
    await waitFor(() => runs.filter((r) => r.key === own && r.outcome === 'error').length >= 8, { timeoutMs: 40_000, intervalMs: 20, message: 'eight TemplateNotFound retries' });
    const lastFailure = runs.filter((r) => r.key === own).at(-1)!.at;
    expect((await getObject<any>(inst('late-1'))).status?.phase).toBe('CreationLoopBackoff');
    const desk = l.inputs.namespaced.find((o) => o.kind === 'Template' && o.metadata.name === 'desk')!;
    await create({ ...structuredClone(desk), metadata: { name: 'late', namespace: l.workspaceNs } });
    await waitFor(() => runs.some((r) => r.key === own && r.outcome === 'success'), { timeoutMs: 30_000, intervalMs: 20, message: 'late-1 reconciled' });
    const success = runs.find((r) => r.key === own && r.outcome === 'success')!.at;
    expect(success - lastFailure).toBeLessThan(10_000);
    expect(await liveOf({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'late-1', namespace: l.tenantNs } })).toBeDefined();
  });
});
