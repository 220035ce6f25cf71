// The example lab (examples/lab with examples/crownlabs.config.yaml) delivered by the controller:
// time to converge, and every live object equal to what `crownlabs synth` renders for the inputs
// read back from the cluster ("one composition"). Uses the lab's real names; cleans up after itself.
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Inventory } from '../../src/inputs/inventory.ts';
import { checkObject, readInputs, type SourcedObject } from '../../src/inputs/parse.ts';
import type { Problem } from '../../src/inputs/problems.ts';
import { compose, renderAll } from '../../src/compose/compose.ts';
import { loadConfig } from '../../src/config/config.ts';
import { withOwner } from '../../src/controller/apply-set.ts';
import { getObject, listObjects, REPO_ROOT, rest, waitFor, type KubeObject } from './cluster.ts';
import { create, createIgnoringConflict, deleteNamespaceWithPvcs, liveOf, patch, releasePvcs, runController, type RunningController } from './controller-support.ts';

const { config } = loadConfig({ file: path.join(REPO_ROOT, 'examples/crownlabs.config.yaml') });
const inputs = readInputs([path.join(REPO_ROOT, 'examples/lab')]).objects.map((o) => structuredClone(o.object) as unknown as KubeObject);
const clusterScoped = inputs.filter((o) => o.kind === 'Tenant' || o.kind === 'Workspace');
const namespaced = inputs.filter((o) => o.kind === 'Template' || o.kind === 'Instance');
let ctl: RunningController;
let convergeMs = 0;

beforeAll(async () => {
  // A previous run's namespaces must be gone first.
  const labNamespaces = [...new Set([...namespaced.map((o) => o.metadata.namespace!), 'sandbox-jane-smith'])];
  for (const n of [...labNamespaces, config.mydrivePvcsNamespace]) await releasePvcs(n);
  await waitFor(async () => (await Promise.all(labNamespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } })))).every((x) => !x), { timeoutMs: 60_000, message: 'old lab namespaces gone' });
  const t0 = Date.now();
  await createIgnoringConflict({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: config.mydrivePvcsNamespace } });
  for (const o of clusterScoped) {
    // Logged in just now: the personal namespaces are kept (docs/behaviour.md §5.3 step 5).
    if (o.kind === 'Tenant') (o.spec as Record<string, unknown>).lastLogin = new Date().toISOString();
    await create(o);
  }
  ctl = await runController(config, { maxConcurrentReconciles: 4 });
  const namespaces = [...new Set(namespaced.map((o) => o.metadata.namespace!))];
  await waitFor(async () => (await Promise.all(namespaces.map((n) => getObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } })))).every(Boolean), { message: 'lab namespaces' });
  for (const o of namespaced.filter((o) => o.kind === 'Template')) await create(o);
  for (const o of namespaced.filter((o) => o.kind === 'Instance')) {
    const { uid: _uid, ...metadata } = o.metadata as Record<string, unknown>;
    await create({ ...o, metadata } as KubeObject);
  }
  await waitFor(
    async () => {
      const live = await Promise.all(namespaced.filter((o) => o.kind === 'Instance').map((o) => liveOf(o)));
      // Reconciled = the Template spec is frozen on it.
      const waiting = live.filter((i: any) => !i?.metadata.annotations?.['composer.crownlabs.polito.it/template-spec']).map((i) => i?.metadata.name);
      if (waiting.length) throw new Error(`no status yet: ${waiting.join(', ')}`);
      return true;
    },
    { message: 'instance status' },
  );
  // kwok's Stages run the VMs and pods: every Instance ends Ready, or Off when stopped.
  await waitFor(
    async () => {
      const live = await Promise.all(namespaced.filter((o) => o.kind === 'Instance').map((o) => liveOf(o)));
      const waiting = live.filter((i: any) => !['Ready', 'Off'].includes(i?.status?.phase)).map((i: any) => `${i?.metadata.name}: ${i?.status?.phase}`);
      if (waiting.length) throw new Error(`not Ready/Off yet: ${waiting.join(', ')}`);
      return true;
    },
    { timeoutMs: 90_000, message: 'instances Ready or Off' },
  );
  await ctl.handle.idle();
  convergeMs = Date.now() - t0;
  console.log(`example lab converged in ${convergeMs} ms (${ctl.writes().length} writes, ${ctl.requests.length} requests)`);
});

afterAll(async () => {
  await ctl?.handle.stop();
  const c = rest();
  for (const o of clusterScoped) {
    await patch(o, { metadata: { finalizers: null } }).catch(() => undefined);
    await c.request('DELETE', `/apis/${o.apiVersion}/${o.kind === 'Tenant' ? 'tenants' : 'workspaces'}/${o.metadata.name}`).catch(() => undefined);
  }
  for (const n of new Set([...namespaced.map((o) => o.metadata.namespace!), 'sandbox-jane-smith'])) await deleteNamespaceWithPvcs(n);
  await releasePvcs(config.mydrivePvcsNamespace);
});

it('every live object equals what compose renders for the inputs read back from the cluster', async () => {
  const objects: SourcedObject[] = [];
  const problems: Problem[] = [];
  const read = async (apiVersion: string, kind: string, names: Set<string>) => {
    for (const it of await listObjects<KubeObject>(apiVersion, kind)) {
      const key = it.metadata.namespace ? `${it.metadata.namespace}/${it.metadata.name}` : it.metadata.name;
      if (names.has(key)) checkObject({ ...it, apiVersion, kind }, { file: 'cluster', document: 1 }, problems, objects);
    }
  };
  const keys = (kind: string) => new Set(inputs.filter((o) => o.kind === kind).map((o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name)));
  for (const [apiVersion, kind] of [
    ['crownlabs.polito.it/v1alpha1', 'Workspace'],
    ['crownlabs.polito.it/v1alpha2', 'Tenant'],
    ['crownlabs.polito.it/v1alpha2', 'Template'],
    ['crownlabs.polito.it/v1alpha2', 'Instance'],
  ]) await read(apiVersion, kind, keys(kind));
  await read('v1', 'Namespace', new Set(namespaced.map((o) => o.metadata.namespace!)));
  const { inventory } = Inventory.fromObjects(objects);
  const sets = renderAll(compose(inventory, config));
  expect(sets.filter((s) => s.unit.parent.kind === 'Instance')).toHaveLength(keys('Instance').size);
  const mismatches: string[] = [];
  let count = 0;
  for (const s of sets) {
    const p = s.unit.parent;
    const owner = p.kind === 'Instance' ? inventory.instances.get(`${p.namespace}/${p.name}`) : p.kind === 'Tenant' ? inventory.tenants.get(p.name) : inventory.workspaces.get(p.name);
    for (const o of withOwner(s.objects, owner as never)) {
      count++;
      const live = await liveOf(o);
      if (!live) mismatches.push(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}: missing`);
      else if (JSON.stringify(pickRendered(o, live)) !== JSON.stringify(o)) {
        mismatches.push(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}: ${exactDifference(o, live)}`);
      }
    }
  }
  console.log(`example lab: ${count} objects compared`);
  expect(mismatches).toEqual([]);
});

/** The live object reduced to the fields the rendered one has (same key order), for an exact comparison. */
function pickRendered(rendered: unknown, live: unknown): unknown {
  if (Array.isArray(rendered)) return Array.isArray(live) ? rendered.map((r, i) => pickRendered(r, live[i])) : live;
  if (rendered && typeof rendered === 'object') {
    if (!live || typeof live !== 'object') return live;
    return Object.fromEntries(Object.keys(rendered).map((k) => [k, pickRendered((rendered as Record<string, unknown>)[k], (live as Record<string, unknown>)[k])]));
  }
  return live;
}

function exactDifference(rendered: unknown, live: unknown, path = ''): string | undefined {
  if (Array.isArray(rendered)) {
    if (!Array.isArray(live) || live.length !== rendered.length) return `${path}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`;
    for (let i = 0; i < rendered.length; i++) {
      const d = exactDifference(rendered[i], live[i], `${path}/${i}`);
      if (d) return d;
    }
    return undefined;
  }
  if (rendered && typeof rendered === 'object') {
    for (const [k, v] of Object.entries(rendered)) {
      const d = exactDifference(v, (live as Record<string, unknown> | undefined)?.[k], `${path}/${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return rendered === live ? undefined : `${path}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`;
}

it('a resync of the converged example lab sends zero writes', async () => {
  await ctl.handle.idle();
  const before = ctl.writes().length;
  ctl.handle.resyncAll();
  await ctl.handle.idle();
  expect(ctl.writes().slice(before)).toEqual([]);
});
