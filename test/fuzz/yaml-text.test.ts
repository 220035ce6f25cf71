// Mutated YAML text (control and line-break characters, invalid UTF-8, aliases, alias bombs, tags,
// duplicate keys, deep nesting, huge values, odd line endings, stray files) through the one-shot
// pipeline and through watch mode's incremental session, in a worker process with a time and
// memory limit per case: an alias bomb or a hang is a reported failure, not a stuck suite. A sample
// of the accepted cases' output goes to the real API server (support/server-dry-run.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { textCase, watchCase } from './support/arbitraries.ts';
import type { DocCase } from './support/doc-case.ts';
import { PipelineRunner } from './support/pipeline-runner.ts';
import { ServerDryRun } from './support/server-dry-run.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/yaml-text.test.ts';
const runner = new PipelineRunner();
const server = new ServerDryRun();
afterAll(async () => {
  runner.close();
  await server.close();
});

const check = (kind: 'doc' | 'watch') => async (c: DocCase) => {
  const r = await runner.run(kind, c);
  if (!r.ok) throw new Error(r.failure);
  // A sample of what synth/gitops wrote goes to the real API server too.
  if (r.accepted) await server.check(r.objects);
};

describe('fuzz: YAML text through the readers', () => {
  it('documents: text edits', { timeout: timeoutOf('documents: text edits', 500) }, async () => {
    const { runs } = await fuzz('documents: text edits', FILE, textCase, check('doc'));
    if (!settings.path) expect(runs).toBe(runsOf('documents: text edits'));
    server.expectSampled(settings.path !== undefined);
  });

  it('documents: watch mode', { timeout: timeoutOf('documents: watch mode', 500) }, async () => {
    const { runs } = await fuzz('documents: watch mode', FILE, watchCase, check('watch'));
    if (!settings.path) expect(runs).toBe(runsOf('documents: watch mode'));
  });
});
