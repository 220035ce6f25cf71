#!/usr/bin/env node
// Runs the TypeScript sources through tsx's loader: `npx crownlabs …` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
