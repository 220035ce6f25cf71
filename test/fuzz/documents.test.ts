// Mutated CrownLabs documents (object-level edits: deletions, type swaps, hostile strings and keys,
// huge values, clones, long names) through read → compose → render → emit → gitops → validate, in
// a worker process with a time and memory limit per case. See support/pipeline.ts for the checks;
// a sample of the accepted cases' output also goes to the real API server (support/server-dry-run.ts).
import { afterAll, describe, expect, it } from 'vitest';
import { objectCase, unknownFieldCase } from './support/arbitraries.ts';
import type { DocCase } from './support/doc-case.ts';
import { PipelineRunner } from './support/pipeline-runner.ts';
import { ServerDryRun } from './support/server-dry-run.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';

const FILE = 'test/fuzz/documents.test.ts';
const runner = new PipelineRunner();
const server = new ServerDryRun();
afterAll(async () => {
  runner.close();
  await server.close();
});

/** The case passes the pipeline's checks and, when sampled, the real API server accepts all that synth/gitops wrote. */
const check = async (c: DocCase): Promise<void> => {
  const r = await runner.run('doc', c);
  if (!r.ok) throw new Error(r.failure);
  if (r.accepted) await server.check(r.objects);
};

describe('fuzz: documents through synth, gitops and validate', () => {
  it('documents: object edits', { timeout: timeoutOf('documents: object edits', 400) }, async () => {
    const { runs } = await fuzz('documents: object edits', FILE, objectCase, check);
    if (!settings.path) expect(runs).toBe(runsOf('documents: object edits'));
    server.expectSampled(settings.path !== undefined);
  });

  it('documents: unknown fields', { timeout: timeoutOf('documents: unknown fields', 400) }, async () => {
    const { runs } = await fuzz('documents: unknown fields', FILE, unknownFieldCase, check);
    if (!settings.path) expect(runs).toBe(runsOf('documents: unknown fields'));
  });
});
