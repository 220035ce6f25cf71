// A render worker: composes and renders its share of the resource sets and sends back their
// output as strings (cheap to pass between threads), so a full render uses every core.
import { parentPort, workerData } from 'node:worker_threads';
import { Inventory } from '../../api/inventory.ts';
import { compose, renderUnit } from '../../compose/compose.ts';
import { GitopsTreeBuilder } from '../gitops.ts';
import { objectsToYaml } from '../yaml-emitter.ts';
import type { WorkerInput, WorkerOutput } from './render-pool.ts';
import { bucketOf } from './render-pool.ts';

const input = workerData as WorkerInput;
const { inventory } = Inventory.fromObjects(input.objects.map((object) => ({ object, source: { file: '', document: 0 } })));
const composition = compose(inventory, input.config, { only: (p) => bucketOf(p, input.count) === input.index });
const builder = new GitopsTreeBuilder(input.config);
const out: WorkerOutput = { sets: [] };
for (const unit of composition.units) {
  const objects = renderUnit(unit);
  const set = { unit, objects };
  out.sets.push({
    id: unit.id,
    parent: unit.parent,
    dependsOn: [...unit.dependsOn],
    objectCount: objects.length,
    yaml: input.mode === 'synth' ? objectsToYaml(objects) : undefined,
    gitops: input.mode === 'gitops' ? builder.setFilesOf(set) : undefined,
  });
}
parentPort!.postMessage(out);
