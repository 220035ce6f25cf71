// The rendered-digest label is the controller's alone: `synth` and `gitops` write no trace of it,
// and the digest is a function of the composition only (two renders of one lab agree).
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { renderedDigest, RENDERED_DIGEST_LABEL, withRenderedDigest } from '../../../src/controller/rendered-digest.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { CONFIG, crownlabs, LAB } from '../../support/cli.ts';
import { testConfig } from '../../support/lab.ts';

const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));

describe('the rendered digest', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'rendered-digest-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('appears in no file synth or gitops writes', () => {
    for (const command of ['synth', 'gitops']) {
      const out = join(tmp, command);
      const r = crownlabs([command, '-f', LAB, '--config', CONFIG, '-o', out]);
      expect(r.code, r.stderr).toBe(0);
      const written = files(out);
      expect(written.length).toBeGreaterThan(5);
      for (const f of written) expect(readFileSync(f, 'utf8'), f).not.toContain(RENDERED_DIGEST_LABEL);
    }
  }, 120_000);

  it('is the same for every object in two compositions of one lab, and differs between objects', () => {
    const render = () => renderAll(compose(loadInventory([LAB]).inventory, testConfig())).flatMap((s) => withRenderedDigest(s.objects));
    const [a, b] = [render(), render()];
    expect(a.map((o) => o.metadata.labels![RENDERED_DIGEST_LABEL])).toEqual(b.map((o) => o.metadata.labels![RENDERED_DIGEST_LABEL]));
    expect(new Set(a.map((o) => renderedDigest(o))).size).toBe(a.length);
  });
});
