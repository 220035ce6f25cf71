#!/usr/bin/env node
// Runs the CLI from an esbuild bundle of the TypeScript sources, made once per version of them
// in .cache/ (src/runtime/bundle.mjs): plain JavaScript starts faster and takes less memory than
// tsx transforming every module. `npx crownlabs …` works right after `npm ci`. Where no bundle
// can be made (no writable .cache/), or with CROWNLABS_TSX=1 (stack traces on the sources),
// tsx's loader runs the sources directly.
import { bundledEntry, CLI_ENTRY } from '../src/runtime/bundle.mjs';

const entry = process.env.CROWNLABS_TSX === '1' ? undefined : await bundledEntry(CLI_ENTRY).catch(() => undefined);
let main;
if (entry) ({ main } = await import(entry.href));
else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv);
