// A render worker: claims chunks of units from the shared counter, composes and renders them from
// the same validated input as the main thread, and sends back each set's output as strings.
import { parentPort, workerData } from 'node:worker_threads';
import { Inventory } from '../../inputs/inventory.ts';
import { compose, type RenderUnit } from '../../compose/compose.ts';
import { parentKey } from '../../model/labels.ts';
import { GitopsTreeBuilder } from '../gitops.ts';
import { renderSetOutput, type WorkerChunk, type WorkerInput } from './render-pool.ts';

const input = workerData as WorkerInput;
const counter = new Int32Array(input.next);
const n = input.ids.length;
const builder = new GitopsTreeBuilder(input.config);
let units: Map<string, RenderUnit> | undefined;
for (;;) {
  const start = Atomics.add(counter, 0, input.chunk);
  if (start >= n) break;
  const end = Math.min(n, start + input.chunk);
  // Composed once, for the units nobody had claimed when this worker got here: the later chunks.
  units ??= unitsFrom(start);
  const sets = input.ids.slice(start, end).map((id) => {
    const unit = units!.get(id);
    if (!unit) throw new Error(`render worker: resource set ${id} is not in its composition`);
    return renderSetOutput(unit, input.mode, builder);
  });
  parentPort!.postMessage({ start, sets } satisfies WorkerChunk);
}

function unitsFrom(start: number): Map<string, RenderUnit> {
  const { inventory } = Inventory.fromObjects(input.objects.map((object) => ({ object, source: { file: '', document: 0 } })));
  const wanted = new Set(input.parents.slice(start).map(parentKey));
  return new Map(compose(inventory, input.config, { only: (p) => wanted.has(parentKey(p)), secretValues: input.mode !== 'gitops' }).units.map((u) => [u.id, u]));
}
