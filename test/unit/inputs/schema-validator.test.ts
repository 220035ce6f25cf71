// Found by the fuzz suite (test/fuzz): a CrownLabs document without `spec` passed the CRD schema
// (no CRD requires spec) and crashed a later step with "internal error" (exit 70).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadInventory } from '../../../src/inputs/load.ts';
import { parseInputText } from '../../../src/inputs/parse.ts';
import { compose } from '../../../src/compose/compose.ts';
import { loadConfig } from '../../../src/config/config.ts';
import { CONFIG, LAB } from '../../support/cli.ts';

const KINDS = [
  ['Tenant', 'v1alpha2', false, 'spec.email'],
  ['Workspace', 'v1alpha1', false, 'spec.quota'],
  ['Template', 'v1alpha2', true, 'spec.environmentList'],
  ['Instance', 'v1alpha2', true, 'spec["template.crownlabs.polito.it/TemplateRef"]'],
  ['InstanceSnapshot', 'v1alpha2', true, 'spec.instanceRef'],
  ['ImageList', 'v1alpha1', false, 'spec.registryName'],
] as const;

describe('a CrownLabs document without spec (#14 fuzz)', () => {
  it.each(KINDS)('a %s without spec is rejected, naming the missing spec fields', (kind, version, namespaced, field) => {
    const text = `apiVersion: crownlabs.polito.it/${version}\nkind: ${kind}\nmetadata:\n  name: a\n${namespaced ? '  namespace: n\n' : ''}`;
    const { objects, problems } = parseInputText(text, 'f.yaml');
    expect(objects).toEqual([]);
    expect(problems).toContainEqual(expect.objectContaining({ severity: 'error', file: 'f.yaml', line: 1, field, message: 'required value is missing' }));
  });

  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('in the example lab, is an input error, not a crash of loading or composing', () => {
    dir = mkdtempSync(join(tmpdir(), 'no-spec-'));
    for (const f of readdirSync(LAB)) {
      // Every document loses its spec: Instances, Templates, Tenants, Workspaces alike.
      writeFileSync(join(dir, f), readFileSync(join(LAB, f), 'utf8').replace(/^spec:\n(?:[ #].*\n?)*/gm, ''));
    }
    const { config } = loadConfig({ file: CONFIG, env: {} });
    const { inventory, problems } = loadInventory([dir], { cwd: dir });
    const composition = compose(inventory, config);
    const errors = [...problems, ...composition.problems].filter((p) => p.severity === 'error');
    expect(errors.length).toBeGreaterThan(0);
    for (const p of errors) expect(p).toMatchObject({ file: expect.any(String), line: expect.any(Number), field: expect.stringMatching(/^spec/) });
  });
});
