// `gitops --watch` against a model: random sequences of 30-40 edits of a small lab on disk; after
// each quiet period the tree is a fresh render of the disk, or the last good tree when the disk is
// invalid (support/watch-model.ts). Most sequences run through the session in process; a few
// through the real `gitops --watch` process and its file watcher.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testConfig } from '../support/lab.ts';
import { fuzz, runsOf, settings, timeoutOf } from './support/settings.ts';
import { CONFIG } from '../support/cli.ts';
import { opSequence, runInProcess, runThroughProcess } from './support/watch-model.ts';

const FILE = 'test/fuzz/watch-model.test.ts';
const config = testConfig({ gitopsSecretMode: 'existing', gitopsRepoUrl: 'https://git.example/lab.git' });

describe('fuzz: gitops --watch mirrors the disk', () => {
  it('watch: edit sequences', { timeout: timeoutOf('watch: edit sequences', 3000) }, async () => {
    const t0 = Date.now();
    const { runs } = await fuzz('watch: edit sequences', FILE, opSequence, async (ops) => runInProcess(ops, config, mkdtempSync(join(tmpdir(), 'watch-model-'))));
    console.log(`watch: edit sequences: ${runs} sequences in ${Date.now() - t0} ms`);
    if (!settings.path) expect(runs).toBe(runsOf('watch: edit sequences'));
  });

  it('watch: edit sequences, real process', { timeout: timeoutOf('watch: edit sequences, real process', 120_000) }, async () => {
    const t0 = Date.now();
    const { runs } = await fuzz('watch: edit sequences, real process', FILE, opSequence, (ops) => runThroughProcess(ops, CONFIG, mkdtempSync(join(tmpdir(), 'watch-process-'))));
    console.log(`watch: edit sequences, real process: ${runs} sequences in ${Date.now() - t0} ms`);
    if (!settings.path) expect(runs).toBe(runsOf('watch: edit sequences, real process'));
  });
});
