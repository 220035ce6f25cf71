// A field the controller stops rendering leaves the live object at the next reconcile, on the real
// test cluster: an Ingress's auth annotations when `instancesAuthUrl` is unset, and a label, a
// container env var and a VM field that an earlier rendering (an earlier version of ours, with the
// same field manager) applied. Objects without the digest label of what is rendered (written by an
// older version) get it once, and that write restarts nothing.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ComposerConfig } from '../../src/config/config.ts';
import { RENDERED_DIGEST_LABEL, withRenderedDigest } from '../../src/controller/rendered-digest.ts';
import { FIELD_MANAGER } from '../../src/kube/objects.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { diffAgainstCluster, type ObjectDiff } from '../../src/controller/dry-run-diff.ts';
import { DEFAULT_KEEP_ALIVE_MS } from '../../src/controller/controller.ts';
import type { KubeObject as RenderedObject } from '../../src/inputs/types.ts';
import { adminKubeConfig, getObject, listObjects, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, expectedObjects, lab, labConfig, liveOf, runController, shardName, type Lab, type RunningController } from './controller-support.ts';

const labs: Lab[] = [];
const running: RunningController[] = [];
afterEach(async () => {
  for (const c of running.splice(0)) await c.handle.stop();
});
afterAll(async () => {
  for (const l of labs) await cleanupLab(l);
});

type Any = any; // eslint-disable-line @typescript-eslint/no-explicit-any
const AUTH = 'nginx.ingress.kubernetes.io/auth-url';

/** Runs the controller until every key of `keys` has completed a reconcile after it started. */
async function reconcileOnce(config: ComposerConfig, keys: string[]): Promise<RunningController> {
  const ctl = await runController(config);
  running.push(ctl);
  await waitFor(() => keys.every((k) => ctl.reconciled.includes(k)), { timeoutMs: 90_000, message: `a reconcile of ${keys.join(', ')}` });
  return ctl;
}

async function stop(ctl: RunningController): Promise<void> {
  running.splice(running.indexOf(ctl), 1);
  await ctl.handle.stop();
}

/** What an earlier rendering applied: `obj` changed by `edit`, with its digest, by our field manager. */
async function applyAsEarlierRendering(obj: RenderedObject, edit: (o: Any) => void): Promise<void> {
  const earlier = structuredClone(obj) as Any;
  edit(earlier);
  await serverSideApply(withRenderedDigest([earlier])[0] as KubeObject, { fieldManager: FIELD_MANAGER });
}

const DIGEST_PATH = `metadata.labels[${JSON.stringify(RENDERED_DIGEST_LABEL)}]`;

/** What `crownlabs diff` predicts for the objects of a namespace, by `Kind/name`. */
async function predicted(config: ComposerConfig, namespace: string): Promise<Map<string, ObjectDiff>> {
  const r = await diffAgainstCluster({ client: new KubeClient(adminKubeConfig()), config, keepAliveMs: DEFAULT_KEEP_ALIVE_MS, include: (o) => o.metadata.namespace === namespace });
  expect(r.errors).toEqual([]);
  return new Map(r.changes.map((c) => [c.id.replace(`/${namespace}/`, '/'), c]));
}

describe('fields no longer rendered', () => {
  it('leave the live objects within one reconcile, and objects without a digest get it without a restart', async () => {
    const l = lab(shardName('rf'));
    labs.push(l);
    const withAuth = labConfig(l.shard, { instancesAuthUrl: 'https://auth.example/oauth2' });
    const without = labConfig(l.shard);
    const flavours = ['desk-1', 'pvm-1'];
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: withAuth.mydrivePvcsNamespace } });
    for (const o of l.inputs.cluster) await create(o);
    const keys = flavours.map((n) => `Instance/${l.tenantNs}/${n}`);
    const ingress = { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { namespace: l.tenantNs, name: 'desk-1-gui' } };
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: l.tenantNs, name: 'desk-1' } };
    const vm = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { namespace: l.tenantNs, name: 'pvm-1' } };

    // 1. Rendered with the auth URL: the Ingress carries its annotations.
    let ctl = await runController(withAuth);
    running.push(ctl);
    await waitFor(() => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } }), { timeoutMs: 60_000, message: 'tenant namespace' });
    for (const o of l.inputs.namespaced.filter((o) => o.kind === 'Template' || flavours.includes(o.metadata.name))) await create(o);
    await waitFor(async () => ((await liveOf(ingress))?.metadata.annotations as Record<string, string> | undefined)?.[AUTH], { timeoutMs: 90_000, message: 'the auth annotations' });
    await waitFor(async () => (await liveOf(vm)) && (await liveOf(deployment)), { timeoutMs: 60_000, message: 'the VM and the Deployment' });
    await stop(ctl);

    // 2. The auth URL unset: diff shows the annotations going (not the digest), and they go at the first reconcile.
    const unset = (await predicted(without, l.tenantNs)).get('Ingress/desk-1-gui')!;
    expect(unset.paths).toEqual(expect.arrayContaining([`metadata.annotations[${JSON.stringify(AUTH)}]`]));
    expect(unset.paths).not.toContain(DIGEST_PATH);
    ctl = await reconcileOnce(without, keys);
    const annotations = (await liveOf(ingress))!.metadata.annotations as Record<string, string>;
    expect(Object.keys(annotations).filter((k) => k.startsWith('nginx.ingress.kubernetes.io/auth-'))).toEqual([]);
    expect(((await liveOf(ingress)) as Any).metadata.labels?.[RENDERED_DIGEST_LABEL]).toMatch(/^[0-9a-f]{40}$/);
    await stop(ctl);

    // 3. A label, an env var and a VM field an earlier rendering had: gone at the first reconcile.
    const rendered = await expectedObjects(l, without);
    const find = (ref: { kind: string; metadata: { name: string } }) => rendered.find((o) => o.kind === ref.kind && o.metadata.name === ref.metadata.name)!;
    await applyAsEarlierRendering(find(deployment), (d) => {
      d.metadata.labels['example.org/earlier'] = 'yes';
      d.spec.template.spec.containers.find((c: Any) => c.name === 'desk').env.push({ name: 'EARLIER', value: '1' });
    });
    await applyAsEarlierRendering(find(vm), (v) => (v.spec.template.spec.evictionStrategy = 'None'));
    const before = (await liveOf(deployment)) as Any;
    expect(before.metadata.labels['example.org/earlier']).toBe('yes');
    expect(before.spec.template.spec.containers.find((c: Any) => c.name === 'desk').env.map((e: Any) => e.name)).toContain('EARLIER');
    expect(((await liveOf(vm)) as Any).spec.template.spec.evictionStrategy).toBe('None');
    const earlier = await predicted(without, l.tenantNs);
    expect(earlier.get('Deployment/desk-1')!.paths).toEqual(expect.arrayContaining(['metadata.labels["example.org/earlier"]', expect.stringMatching(/^spec\.template\.spec\.containers\[\d\]\.env\[\d\]/)]));
    expect(earlier.get('VirtualMachine/pvm-1')!.paths).toEqual(expect.arrayContaining(['spec.template.spec.evictionStrategy']));
    ctl = await reconcileOnce(without, keys);
    const after = (await liveOf(deployment)) as Any;
    expect(after.metadata.labels['example.org/earlier']).toBeUndefined();
    expect(after.spec.template.spec.containers.find((c: Any) => c.name === 'desk').env.map((e: Any) => e.name)).not.toContain('EARLIER');
    expect(((await liveOf(vm)) as Any).spec.template.spec.evictionStrategy).toBeUndefined();
    await stop(ctl);

    // 4. Written by an older version (same fields, no digest): the digest is added, no generation
    // moves, the Deployment keeps its ReplicaSet and pods.
    for (const ref of [deployment, vm]) {
      await serverSideApply(find(ref) as KubeObject, { fieldManager: FIELD_MANAGER });
      expect(((await liveOf(ref)) as Any).metadata.labels?.[RENDERED_DIGEST_LABEL]).toBeUndefined();
    }
    const generations = async () => Promise.all([deployment, vm].map(async (r) => (await liveOf(r) as Any).metadata.generation));
    const replicaSets = async () => (await listObjects('apps/v1', 'ReplicaSet', { namespace: l.tenantNs })).map((r) => r.metadata.name).sort();
    const pods = async () => (await listObjects('v1', 'Pod', { namespace: l.tenantNs })).map((p) => `${p.metadata.name} ${(p.metadata as Any).uid}`).sort();
    const [gens, sets, podsBefore] = [await generations(), await replicaSets(), await pods()];
    // diff predicts the one write of each: the digest label, nothing else, nothing dangerous.
    const digestOnly = await predicted(without, l.tenantNs);
    for (const id of ['Deployment/desk-1', 'VirtualMachine/pvm-1']) {
      expect(digestOnly.get(id), id).toMatchObject({ action: 'change', paths: [DIGEST_PATH], note: expect.stringMatching(/no other field changes/) });
      expect(digestOnly.get(id)!.danger, id).toBeUndefined();
    }
    ctl = await reconcileOnce(without, keys);
    for (const ref of [deployment, vm]) expect(((await liveOf(ref)) as Any).metadata.labels?.[RENDERED_DIGEST_LABEL], ref.kind).toMatch(/^[0-9a-f]{40}$/);
    expect(await generations()).toEqual(gens);
    expect(await replicaSets()).toEqual(sets);
    expect(await pods()).toEqual(podsBefore);
    // Converged: a further resync sends no writes.
    await ctl.handle.idle(1000);
    expect([...(await predicted(without, l.tenantNs)).keys()]).toEqual([]);
    const applies = () => ctl.writes().filter((w) => w.method === 'PATCH' && !w.path.endsWith('/status')).length;
    const writes = applies();
    ctl.handle.resyncAll();
    await ctl.handle.idle(1000);
    expect(applies() - writes).toBe(0);
  }, 300_000);
});
