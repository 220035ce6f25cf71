// Issue 8, upgrades: applying the install again is a no-op (no resourceVersion moves), a newer
// install (a new image tag) changes exactly the objects whose rendering changed, and the new
// controller (as the install's ServiceAccount, configured from the install's ConfigMap) takes over
// a converged lab without a single write to the Instances' children.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ComposerConfig } from '../../src/config/config.ts';
import { startController, type ControllerHandle } from '../../src/controller/controller.ts';
import type { RequestRecord } from '../../src/kube/client.ts';
import { FROZEN_TEMPLATE_ANNOTATION } from '../../src/model/instance-plan.ts';
import { renderPlatform } from '../../src/platform/install.ts';
import { deleteInstall, getObject, kubeConfigFor, serverSideApply, waitFor, type KubeObject } from './cluster.ts';
import { cleanupLab, create, createIgnoringConflict, expectedObjects, lab, labConfig, liveOf, shardName } from './controller-support.ts';

const NS = 'crownlabs-upgrade';
const l = lab(shardName('up'));
const base: ComposerConfig = { ...labConfig(l.shard), platformNamespace: NS, platformImage: 'registry.test/crownlabs-composer:1.0.0' };
const v1 = renderPlatform(base) as KubeObject[];
const v2 = renderPlatform({ ...base, platformImage: 'registry.test/crownlabs-composer:1.1.0' }) as KubeObject[];
const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Server-side apply as `kubectl apply --server-side` would (one field manager for the install). */
const applyInstall = (objects: KubeObject[]) => serverSideApply(objects, { fieldManager: 'crownlabs-platform' });

async function versions(objects: KubeObject[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const o of objects) {
    const live = (await getObject<KubeObject>(o)) as any;
    // What the install writes: the spec (generation) and its fields; a status that the cluster's own
    // controllers write meanwhile (a Deployment's, with kwok's pods) moves only the resourceVersion.
    const ours = live?.metadata.managedFields?.filter((m: any) => m.operation === 'Apply' && m.subresource !== 'status');
    out.set(key(o), live?.metadata.generation !== undefined ? JSON.stringify([live.metadata.generation, ours]) : live?.metadata.resourceVersion);
  }
  return out;
}

/** The controller of an install: its ServiceAccount, the config file of its ConfigMap, its shard and Lease. */
async function controllerOf(install: KubeObject[], kc: KubeConfig, requests: RequestRecord[]): Promise<ControllerHandle> {
  const cm = install.find((o) => o.kind === 'ConfigMap') as any;
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'platform-')), 'config.yaml');
  writeFileSync(file, cm.data['config.yaml']);
  const { config, problems } = loadConfig({ file });
  expect(problems).toEqual([]);
  const deployment = install.find((o) => o.kind === 'Deployment' && o.metadata.name === `crownlabs-controller-${l.shard}`) as any;
  const args: string[] = deployment.spec.template.spec.containers[0].args;
  const flag = (f: string) => args[args.indexOf(f) + 1];
  const [k, v] = flag('--target-label').split('=');
  const [wk, wv] = flag('--namespace-whitelist').split('=');
  return startController({
    kubeConfig: kc,
    config: { ...config, targetLabel: { key: k, value: v }, namespaceWhitelist: { [wk]: wv } },
    metricsAddr: '',
    healthProbeAddr: '',
    maxConcurrentReconciles: 4,
    enableLeaderElection: true,
    leaderElectionNamespace: flag('--leader-election-namespace'),
    leaderElectionId: flag('--leader-election-id'),
    logger: pino({ level: process.env.CONTROLLER_LOG ?? 'silent' }),
    onRequest: (r) => requests.push(r),
  });
}

let sa: KubeConfig;

beforeAll(async () => {
  await applyInstall(v1);
  sa = await kubeConfigFor(`system:serviceaccount:${NS}:crownlabs-controller`, ['system:serviceaccounts', `system:serviceaccounts:${NS}`]);
}, 60_000);

afterAll(async () => {
  await cleanupLab(l);
  // Other files render the same cluster-scoped names (the bastion's ClusterRole, for one): leave none behind.
  await deleteInstall(v1);
}, 60_000);

describe('re-applying the install', () => {
  it('the same install again changes nothing (every resourceVersion stays, or where the cluster writes a status: the generation and the applied fields)', async () => {
    const before = await versions(v1);
    await applyInstall(v1);
    expect(await versions(v1)).toEqual(before);
  });
});

describe('upgrading a running lab to a newer install', () => {
  let children: KubeObject[] = [];
  let childVersions = new Map<string, string>();
  let installBefore = new Map<string, string>();

  beforeAll(async () => {
    // A lab converged under v1 by v1's controller.
    await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: base.mydrivePvcsNamespace } });
    const requests: RequestRecord[] = [];
    const old = await controllerOf(v1, sa, requests);
    for (const o of l.inputs.cluster) await create(o);
    await waitFor(async () => (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.workspaceNs } })) && (await getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: l.tenantNs } })), { message: 'lab namespaces' });
    for (const o of l.inputs.namespaced) await create(o);
    await waitFor(
      async () => {
        for (const o of l.inputs.namespaced.filter((x) => x.kind === 'Instance')) if (!(await liveOf(o) as any)?.metadata.annotations?.[FROZEN_TEMPLATE_ANNOTATION]) return false;
        return true;
      },
      { message: 'instances reconciled' },
    );
    // kwok runs the lab's VMs and pods: converged means every Instance Ready, the children's
    // statuses no longer moving.
    await waitFor(
      async () => {
        for (const o of l.inputs.namespaced.filter((x) => x.kind === 'Instance')) if ((await liveOf(o) as any)?.status?.phase !== 'Ready') return false;
        return true;
      },
      { timeoutMs: 90_000, message: 'instances Ready' },
    );
    await old.idle();
    await old.stop();
    children = (await expectedObjects(l, base)) as unknown as KubeObject[];
    childVersions = await versions(children);
    installBefore = await versions(v2);
  }, 180_000);

  it('the newer install changes exactly the objects whose rendering changed: the Deployments running the image', async () => {
    const changedRendering = v2.filter((o, i) => JSON.stringify(o) !== JSON.stringify(v1[i])).map(key);
    expect(v2.map(key)).toEqual(v1.map(key));
    expect(changedRendering).toEqual([`Deployment/${NS}/crownlabs-controller-${l.shard}`, 'Deployment/crownlabs-bastion/ssh-bastion']);
    await applyInstall(v2);
    const after = await versions(v2);
    const moved = [...after].filter(([k, rv]) => installBefore.get(k) !== rv).map(([k]) => k);
    expect(moved).toEqual(changedRendering);
  });

  it('the new controller takes over the lab without writing to any Instance child', async () => {
    expect(children.length).toBeGreaterThan(20);
    const requests: RequestRecord[] = [];
    const ctl = await controllerOf(v2, sa, requests);
    try {
      await ctl.idle(500);
      // It did read and reconcile the lab: its informers listed, and each parent was reconciled.
      expect(requests.filter((r) => r.method === 'GET').length).toBeGreaterThan(10);
      const writes = requests.filter((r) => r.method !== 'GET' && !r.path.includes('/leases'));
      expect(writes).toEqual([]);
      expect(await versions(children)).toEqual(childVersions);
    } finally {
      await ctl.stop();
    }
  });
});
