// The controller watches, compares and prunes every kind a resource set can render: the list is
// derived from the constructs, so a kind a construct renders (the per-instance oauth2-proxy's
// ConfigMap) is never left out; each is watched by our label only, as ConfigMaps are numerous.
import { describe, expect, it } from 'vitest';
import { Caches } from '../../../src/controller/caches.ts';
import { childKinds } from '../../../src/controller/child-kinds.ts';
import { renderedKinds } from '../../../src/compose/representative-lab.ts';
import { compose, renderUnit } from '../../../src/compose/compose.ts';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import type { KubeClient } from '../../../src/kube/client.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const id = (k: { apiVersion: string; kind: string }) => `${k.apiVersion}/${k.kind}`;

describe('the child kinds', () => {
  // Never contacted: the informers are built, not started.
  const caches = new Caches({} as KubeClient);

  it('hold every kind rendered for the example lab and a generated one, in either auth mode, with and without an auth URL', () => {
    const generated = Inventory.fromObjects(generateLab({ instances: 40, tenants: 6, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } }))).inventory;
    const rendered = new Set<string>();
    for (const inventory of [generated, loadInventory(['examples/lab']).inventory]) {
      for (const authMode of ['shared', 'per-instance'] as const) {
        for (const instancesAuthUrl of ['', 'https://auth.example/oauth2']) {
          for (const unit of compose(inventory, testConfig({ authMode, instancesAuthUrl })).units) {
            // A snapshot's Job is created once, not applied: Jobs are watched to be read.
            for (const o of renderUnit(unit)) rendered.add(id(o));
          }
        }
      }
    }
    expect(rendered).toContain('v1/ConfigMap');
    const watched = new Set(childKinds().map(id));
    expect([...rendered].filter((k) => !watched.has(k))).toEqual([]);
    for (const k of rendered) expect(caches.children.has(k), k).toBe(true);
  });

  it('are the kinds the constructs render, and Jobs (created once and read): nothing watched for nothing', () => {
    expect(childKinds().map(id)).toEqual([...renderedKinds().map(id), 'batch/v1/Job']);
    expect(renderedKinds().map(id)).toEqual(expect.arrayContaining(['v1/ConfigMap', 'v1/Secret', 'apps/v1/Deployment', 'kubevirt.io/v1/VirtualMachine', 'kubevirt.io/v1/VirtualMachineInstance']));
    expect(renderedKinds().map(id)).not.toContain('cdi.kubevirt.io/v1beta1/DataVolume');
  });

  it('are each watched by our managed-by label (VMIs: by the instance label), never whole (Namespaces: the input informer, every one)', () => {
    expect(caches.child('v1', 'Namespace')).toBe(caches.namespaces);
    for (const k of childKinds().filter((c) => c.kind !== 'Namespace')) {
      const inf = caches.child(k.apiVersion, k.kind)!;
      expect(inf.options.labelSelector, id(k)).toBe(k.kind === 'VirtualMachineInstance' ? 'crownlabs.polito.it/instance' : 'app.kubernetes.io/managed-by=crownlabs-composer');
    }
  });
});
