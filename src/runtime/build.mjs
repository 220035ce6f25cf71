// `npm run build` (and the image build): makes the product's bundles ahead of time, so that an
// install on a read-only filesystem never needs to write them.
import { bundledEntry, PRODUCT_ENTRIES } from './bundle.mjs';

for (const entry of PRODUCT_ENTRIES) process.stdout.write(`${(await bundledEntry(entry)).pathname}\n`);
