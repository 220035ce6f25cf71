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
  // A production install (the image) has bundles and no tsx: say so in one line, not a stack trace.
  const tsx = await import('tsx/esm/api').catch(() => undefined);
  if (!tsx) {
    process.stderr.write('crownlabs: error: no bundle of the sources in .cache/ and no tsx to run them (a production install?): run `npm run build` where the devDependencies are installed\n');
    process.exit(1);
  }
  tsx.register();
  ({ main } = await import('../src/cli/main.ts'));
}
process.exitCode = await main(process.argv);
