import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { distFiles } from '../../../src/sinks/files.ts';
import { GitopsTreeBuilder, gitopsFiles } from '../../../src/sinks/gitops.ts';
import { renderParallel } from '../../../src/sinks/parallel/render-pool.ts';
import { workerScript } from '../../../src/sinks/parallel/worker-script.ts';
import { checkSetObjects } from '../../../src/compose/prewrite.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

describe('rendering split over worker threads', () => {
  const config = testConfig({ gitopsMaxObjectsPerApp: 20 });
  const { inventory } = Inventory.fromObjects(generateLab({ instances: 300, tenants: 40, workspaces: 3 }).map((object) => ({ object, source: { file: 'g', document: 0 } })));
  const composition = compose(inventory, config);
  const sets = renderAll(composition);

  it('gives synth the same bytes as one thread, every set exactly once, in unit order', async () => {
    const progress: number[] = [];
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'synth', undefined, { threads: 3, onProgress: (done) => progress.push(done) });
    expect(out).toHaveLength(composition.units.length);
    const single = distFiles(sets);
    composition.units.forEach((unit, i) => expect(out[i].yaml).toBe(single.get(`${unit.id}.yaml`)));
    expect(progress.at(-1)).toBe(composition.units.length);
  });

  it('gives gitops the same tree as one thread', async () => {
    const builder = new GitopsTreeBuilder(config);
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'gitops', builder, { threads: 2 });
    const tree = builder.filesOf(composition.units.map((unit, i) => ({ unit, objectCount: out[i].objectCount })));
    expect([...tree]).toEqual([...gitopsFiles(sets, config)]);
  });

  it('renders in workers alone the same as one thread (workers bundled from the sources)', async () => {
    expect((await workerScript()).main.pathname).toMatch(/\/\.cache\/render-worker-\w+\.mjs$/);
    const synth = await renderParallel(composition.units, inventory.allObjects(), config, 'synth', undefined, { threads: 2, mainThreadRenders: false });
    const single = distFiles(sets);
    composition.units.forEach((unit, i) => expect(synth[i].yaml).toBe(single.get(`${unit.id}.yaml`)));
    // Workers hand back each set's part of the pre-write checks (#14.10): its objects' identities.
    composition.units.forEach((_unit, i) => expect(synth[i].check).toEqual(checkSetObjects(sets[i].objects)));
    expect(synth[0].check.ids.length).toBeGreaterThan(0);
    const builder = new GitopsTreeBuilder(config);
    const out = await renderParallel(composition.units, inventory.allObjects(), config, 'gitops', builder, { threads: 1, mainThreadRenders: false });
    expect([...builder.filesOf(composition.units.map((unit, i) => ({ unit, objectCount: out[i].objectCount })))]).toEqual([...gitopsFiles(sets, config)]);
  });
});
