// Worker entry when running from TypeScript sources: register tsx's loader in this thread
// (workers do not inherit it on Node 20), then run the real worker module.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
