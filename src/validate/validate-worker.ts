// The validation thread of `validate` (./validation-thread.ts): checks each batch of rendered sets
// (their objects' JSON text, as a sink writes them) while the main thread renders the next ones.
import { parentPort } from 'node:worker_threads';
import { renderedObjectIssues, sharedValidator } from './validator.ts';
import type { ValidationBatch, ValidationReply } from './validation-thread.ts';

const validator = sharedValidator();
let ms = 0;
parentPort!.on('message', (m: ValidationBatch | 'end') => {
  if (m === 'end') {
    parentPort!.postMessage({ done: true, ms, timings: validator.timings } satisfies ValidationReply);
    parentPort!.close();
    return;
  }
  const t0 = performance.now();
  const issues = m.sets.map((json) => renderedObjectIssues(JSON.parse(json) as unknown[], validator));
  ms += performance.now() - t0;
  parentPort!.postMessage({ start: m.start, issues } satisfies ValidationReply);
});
