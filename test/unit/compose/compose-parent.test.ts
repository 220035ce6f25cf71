import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { compose, renderUnit, type ComposeOptions } from '../../../src/compose/compose.ts';
import { parentKey, type ParentRef } from '../../../src/model/labels.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

describe('compose({ parent }): one reconcile looks its parent up instead of asking about every one', () => {
  const generated = Inventory.fromObjects(generateLab({ instances: 30, tenants: 6, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } }))).inventory;
  const example = loadInventory(['examples/lab']).inventory;
  const config = testConfig({});

  it('gives every parent of a generated lab and of the example lab the same set (ids, dependencies, objects) and problems as the `only` predicate', () => {
    for (const inventory of [generated, example]) {
      const parents = compose(inventory, config).units.map((u) => u.parent);
      expect(new Set(parents.map((p) => p.kind))).toEqual(new Set(['Workspace', 'Tenant', 'Instance']));
      for (const parent of parents) {
        const only: ComposeOptions['only'] = (p) => parentKey(p) === parentKey(parent);
        const a = compose(inventory, config, { only });
        const b = compose(inventory, config, { parent });
        expect(b.units.map((u) => [u.id, u.dependsOn])).toEqual(a.units.map((u) => [u.id, u.dependsOn]));
        expect(b.units).toHaveLength(1);
        expect(renderUnit(b.units[0]!)).toEqual(renderUnit(a.units[0]!));
        expect(b.problems).toEqual(a.problems);
      }
    }
  });

  it('gives nothing for a parent that does not exist, or one of another kind under the same key', () => {
    const gone: ParentRef[] = [
      { kind: 'Instance', namespace: 'tenant-user-0', name: 'nope' },
      { kind: 'Workspace', name: 'nope' },
      { kind: 'InstanceSnapshot', namespace: 'tenant-user-0', name: 'inst-0' },
      { kind: 'Instance', name: 'inst-0' },
    ];
    for (const parent of gone) expect(compose(generated, config, { parent }).units).toEqual([]);
  });
});
