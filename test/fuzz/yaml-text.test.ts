// Mutated YAML text (control and line-break characters, invalid UTF-8, aliases, alias bombs, tags,
// duplicate keys, deep nesting, huge values, odd line endings, stray files) through the one-shot
// pipeline and through watch mode's incremental session, in a worker process with a time and
// memory limit per case: an alias bomb or a hang is a reported failure, not a stuck suite.
import { afterAll, describe, expect, it } from 'vitest';
import { textCase, watchCase } from './support/arbitraries.ts';
import type { DocCase } from './support/doc-case.ts';
import { PipelineRunner } from './support/pipeline-runner.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/yaml-text.test.ts';
const runner = new PipelineRunner();
afterAll(() => runner.close());

const check = (kind: 'doc' | 'watch') => async (c: DocCase) => {
  const r = await runner.run(kind, c);
  if (!r.ok) throw new Error(r.failure);
};

describe('fuzz: YAML text through the readers', () => {
  it('documents: text edits', { timeout: timeoutOf('documents: text edits', 500) }, async () => {
    const { runs } = await fuzz('documents: text edits', FILE, textCase, check('doc'));
    if (!settings.path) expect(runs).toBe(runsOf('documents: text edits'));
  });

  it('documents: watch mode', { timeout: timeoutOf('documents: watch mode', 500) }, async () => {
    const { runs } = await fuzz('documents: watch mode', FILE, watchCase, check('watch'));
    if (!settings.path) expect(runs).toBe(runsOf('documents: watch mode'));
  });
});
