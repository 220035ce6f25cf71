// Dependencies as data (#18 item 3): compose records the Inventory lookups of each set as its
// dependsOn, found or not, and one DependencyIndex turns an input change into the sets it concerns.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { TEMPLATE_REF, TENANT_REF, type InputObject, type Instance, type InstanceSnapshot, type Tenant } from '../../../src/inputs/types.ts';
import { compose, type RenderUnit } from '../../../src/compose/compose.ts';
import { DependencyIndex, lookupKeysOf } from '../../../src/compose/dependency-index.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { effectiveEnvironments } from '../../../src/model/instance-plan.ts';
import { parentKey } from '../../../src/model/labels.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const snapshotConfig = (over: Partial<ComposerConfig> = {}) => testConfig({ vmRegistry: 'registry.example', vmRegistrySecret: 'registry-credentials', ...over });

function inventoryOf(objects: InputObject[]): Inventory {
  return Inventory.fromObjects(objects.map((object, document) => ({ object, source: { file: 'lab.yaml', document } }))).inventory;
}

/** The list compose.ts wrote by hand for each kind of set before the lookups were recorded. */
function handListed(unit: RenderUnit, inv: Inventory): string[] {
  const own = parentKey(unit.parent);
  const ns = unit.parent.namespace ?? '';
  switch (unit.parent.kind) {
    case 'Workspace':
      return [own];
    case 'Tenant':
      return [own, ...(inv.tenants.get(unit.parent.name)!.spec.workspaces ?? []).map((w) => `Workspace/${w.name}`)];
    case 'Instance': {
      const instance = inv.instances.get(`${ns}/${unit.parent.name}`)!;
      const tref = instance.spec[TEMPLATE_REF];
      const ws = unit.plan!.workspaceName;
      return [own, `Template/${tref.namespace}/${tref.name}`, `Tenant/${instance.spec[TENANT_REF].name}`, `Secret/${ns}/mydrive-info`, `Namespace/${ns}`, ...(ws ? inv.managersOf(ws).map((m) => `Tenant/${m.metadata.name}`) : [])];
    }
    case 'InstanceSnapshot': {
      const snapshot = inv.snapshots.get(`${ns}/${unit.parent.name}`)!;
      const ref = snapshot.spec.instanceRef;
      const instance = inv.instances.get(`${ref.namespace || ns}/${ref.name}`)!;
      const tref = instance.spec[TEMPLATE_REF];
      return [own, `Instance/${instance.metadata.namespace}/${instance.metadata.name}`, `Template/${tref.namespace || instance.metadata.namespace}/${tref.name}`, `Namespace/${ns}`];
    }
  }
  throw new Error(`unknown kind ${unit.parent.kind}`);
}

/**
 * What the recorded list adds to or drops from the hand list, each for a reason: the reverse
 * lookups (managers of the workspace; the Tenant whose personal namespace it is, when the
 * namespace is not an input), and the MyDrive Secret is read only when an environment mounts MyDrive.
 */
function expectedRecorded(unit: RenderUnit, inv: Inventory): string[] {
  const keys = new Set(handListed(unit, inv));
  const ns = unit.parent.namespace ?? '';
  if (unit.parent.kind === 'Instance' || unit.parent.kind === 'InstanceSnapshot') {
    if (!inv.namespaces.has(ns)) keys.add(`Namespace/${ns}#tenant`);
  }
  if (unit.parent.kind === 'Instance') {
    if (unit.plan!.workspaceName) keys.add(`Workspace/${unit.plan!.workspaceName}#managers`);
    const instance = inv.instances.get(`${ns}/${unit.parent.name}`)!;
    if (!effectiveEnvironments(instance, inv.templateOf(instance)!).some((e) => e.mountMyDriveVolume)) keys.delete(`Secret/${ns}/mydrive-info`);
  }
  return [...keys].sort();
}

function withSnapshot(objects: InputObject[]): InputObject[] {
  const pvm = objects.find((o) => o.kind === 'Instance' && (o as Instance).spec[TEMPLATE_REF].name.startsWith('pvm')) as Instance;
  const stopped = { ...pvm, spec: { ...pvm.spec, running: false } } as Instance;
  const snapshot = {
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'InstanceSnapshot',
    metadata: { name: 'snap', namespace: pvm.metadata.namespace, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { instanceRef: { name: pvm.metadata.name }, imageName: 'snap-image' },
  } as unknown as InstanceSnapshot;
  return [...objects.filter((o) => o !== pvm), stopped, snapshot];
}

describe('recorded dependencies', () => {
  it('of every kind of set are what the hand list held, plus the reverse lookups, minus a MyDrive Secret no environment mounts', () => {
    const generated = inventoryOf(withSnapshot(generateLab({ instances: 40, tenants: 12, workspaces: 3 })));
    const example = loadInventory([join(ROOT, 'examples', 'lab')]).inventory;
    const exampleConfig = loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml') }).config;
    const kinds = new Set<string>();
    let withoutSecret = 0;
    for (const [inv, config] of [
      [generated, snapshotConfig()],
      [example, exampleConfig],
    ] as const) {
      const { units, dependencies } = compose(inv, config);
      for (const unit of units) {
        kinds.add(unit.parent.kind);
        expect([unit.id, unit.dependsOn]).toEqual([unit.id, expectedRecorded(unit, inv)]);
        expect(dependencies.get(parentKey(unit.parent))).toBe(unit.dependsOn);
        if (unit.parent.kind === 'Instance' && !unit.dependsOn.some((k) => k.startsWith('Secret/'))) withoutSecret++;
      }
    }
    expect([...kinds].sort()).toEqual(['Instance', 'InstanceSnapshot', 'Tenant', 'Workspace']);
    expect(withoutSecret).toBeGreaterThan(0);
  });

  it('an Instance records its workspace managers; a Tenant that becomes a manager concerns every Instance of that workspace', () => {
    const objects = generateLab({ instances: 40, tenants: 12, workspaces: 3 });
    const inv = inventoryOf(objects);
    const { units } = compose(inv, testConfig());
    const index = new DependencyIndex();
    for (const u of units) index.set(u.id, u.dependsOn);
    const user = objects.find((o) => o.kind === 'Tenant' && (o as Tenant).spec.workspaces!.every((w) => w.role === 'user')) as Tenant;
    const ws = user.spec.workspaces![0].name;
    const promoted: Tenant = { ...user, spec: { ...user.spec, workspaces: [{ name: ws, role: 'manager' }, ...user.spec.workspaces!.slice(1)] } };
    expect(lookupKeysOf('Tenant', promoted)).toContain(`Workspace/${ws}#managers`);
    const concerned = index.dependentsOf([...lookupKeysOf('Tenant', user), ...lookupKeysOf('Tenant', promoted)]);
    const ofWorkspace = units.filter((u) => u.plan?.workspaceName === ws).map((u) => u.id);
    expect(ofWorkspace.length).toBeGreaterThan(0);
    for (const id of ofWorkspace) expect(concerned).toContain(id);
    // The managers found are recorded too: their keys and e-mails went into the set.
    const managed = units.find((u) => u.plan && inv.managersOf(u.plan.workspaceName).length > 0)!;
    for (const m of inv.managersOf(managed.plan!.workspaceName)) expect(managed.dependsOn).toContain(`Tenant/${m.metadata.name}`);
  });

  it('a lookup that found nothing is a dependency: an Instance whose Template is missing depends on it, and rendered nothing', () => {
    const objects = generateLab({ instances: 4, tenants: 2, workspaces: 1 });
    const inst = objects.find((o) => o.kind === 'Instance') as Instance;
    const orphan = { ...inst, metadata: { ...inst.metadata, name: 'orphan' }, spec: { ...inst.spec, [TEMPLATE_REF]: { name: 'nope', namespace: inst.spec[TEMPLATE_REF].namespace } } } as Instance;
    const inv = inventoryOf([...objects, orphan]);
    const own = `Instance/${orphan.metadata.namespace}/orphan`;
    const { units, dependencies } = compose(inv, testConfig(), { parent: { kind: 'Instance', namespace: orphan.metadata.namespace, name: 'orphan' } });
    expect(units).toEqual([]);
    expect(dependencies.get(own)).toContain(`Template/${orphan.spec[TEMPLATE_REF].namespace}/nope`);
    const index = new DependencyIndex();
    index.set(own, dependencies.get(own)!);
    const created = { kind: 'Template', metadata: { name: 'nope', namespace: orphan.spec[TEMPLATE_REF].namespace } };
    expect([...index.dependentsOf(lookupKeysOf('Template', created))]).toEqual([own]);
  });

  it('an Instance skipped off the namespace whitelist depends on its Namespace (labelled later, it renders)', () => {
    const objects = generateLab({ instances: 2, tenants: 1, workspaces: 1 });
    const inst = objects.find((o) => o.kind === 'Instance') as Instance;
    const ns = inst.metadata.namespace!;
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: {} } } as unknown as InputObject;
    const config = testConfig({ namespaceWhitelist: { 'crownlabs.polito.it/instance': 'enabled' } });
    const one = { kind: 'Instance' as const, namespace: ns, name: inst.metadata.name };
    const skipped = compose(inventoryOf([...objects, namespace]), config, { parent: one });
    expect(skipped.units).toEqual([]);
    expect(skipped.dependencies.get(parentKey(one))).toEqual([parentKey(one), `Namespace/${ns}`]);
  });
});

describe('DependencyIndex', () => {
  it('replaces a dependent\'s keys on set, forgets them on remove, and answers the dependents of any key', () => {
    const index = new DependencyIndex();
    index.set('a', ['k1', 'k2']);
    index.set('b', ['k2', 'k3']);
    expect([...index.dependentsOf(['k2'])].sort()).toEqual(['a', 'b']);
    index.set('a', ['k3']);
    expect([...index.dependentsOf(['k1', 'k2'])]).toEqual(['b']);
    expect([...index.dependentsOf(['k3'])].sort()).toEqual(['a', 'b']);
    index.remove('b');
    expect([...index.dependentsOf(['k2', 'k3'])]).toEqual(['a']);
    expect(index.dependenciesOf('b')).toBeUndefined();
  });

  it('a Tenant answers to its own key, the managers of each workspace it manages, and its personal namespace', () => {
    const t = { metadata: { name: 'ann.lee' }, spec: { workspaces: [{ name: 'tea', role: 'manager' }, { name: 'coffee', role: 'user' }] } };
    expect(lookupKeysOf('Tenant', t)).toEqual(['Tenant/ann.lee', 'Workspace/tea#managers', 'Namespace/tenant-ann-lee#tenant']);
    // A raw cached copy that failed validation does not throw.
    expect(lookupKeysOf('Tenant', { metadata: { name: 'x' }, spec: { workspaces: 'bad' } })).toEqual(['Tenant/x', 'Namespace/tenant-x#tenant']);
    expect(lookupKeysOf('Template', { metadata: { name: 't', namespace: 'ws' } })).toEqual(['Template/ws/t']);
  });
});
