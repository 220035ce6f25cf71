import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/api/inventory.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { distFiles } from '../../../src/sinks/files.ts';
import { GitopsTreeBuilder, gitopsFiles } from '../../../src/sinks/gitops.ts';
import { renderInWorkers } from '../../../src/sinks/parallel/render-pool.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

describe('rendering split over worker threads', () => {
  const config = testConfig({ gitopsMaxObjectsPerApp: 20 });
  const { inventory } = Inventory.fromObjects(generateLab({ instances: 60, tenants: 12, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } })));
  const composition = compose(inventory, config);
  const sets = renderAll(composition);

  it('gives synth the same bytes as one thread, every set exactly once', async () => {
    const out = await renderInWorkers(inventory.allObjects(), config, 'synth', 3);
    expect(out.map((s) => s.id).sort()).toEqual(composition.units.map((u) => u.id).sort());
    const single = distFiles(sets);
    for (const s of out) expect(s.yaml).toBe(single.get(`${s.id}.yaml`));
  });

  it('gives gitops the same tree as one thread', async () => {
    const out = new Map((await renderInWorkers(inventory.allObjects(), config, 'gitops', 2)).map((s) => [s.id, s]));
    const builder = new GitopsTreeBuilder(config);
    const tree = builder.filesOf(
      composition.units.map((unit) => {
        builder.prime(unit, out.get(unit.id)!.gitops!);
        return { unit, objectCount: out.get(unit.id)!.objectCount };
      }),
    );
    expect([...tree]).toEqual([...gitopsFiles(sets, config)]);
  });
});
