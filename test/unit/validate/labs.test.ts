import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/inputs/inventory.ts';
import { loadInventory } from '../../../src/inputs/load.ts';
import { formatProblem, type Problem } from '../../../src/inputs/problems.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { sharedValidator, validateRenderedSets } from '../../../src/validate/validator.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

function expectNoProblems(problems: readonly Problem[]): void {
  expect(problems.map(formatProblem)).toEqual([]);
}

function validateLab(inventory: Inventory, config: ComposerConfig) {
  const composition = compose(inventory, config);
  expect(composition.problems.filter((p) => p.severity === 'error')).toEqual([]);
  const sets = renderAll(composition);
  return validateRenderedSets(sets, { validator: sharedValidator() });
}

describe('rendered labs validate against the vendored schemas', () => {
  it('the example lab', () => {
    const { config, problems: configProblems } = loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml'), env: {}, flags: {} });
    expect(configProblems).toEqual([]);
    const { inventory, problems } = loadInventory([join(ROOT, 'examples', 'lab')]);
    expect(problems.filter((p) => p.severity === 'error')).toEqual([]);
    const result = validateLab(inventory, config);
    expect(result.sets).toBe(12);
    expect(result.objects).toBeGreaterThan(50);
    expectNoProblems(result.problems);
  });

  for (const authMode of ['shared', 'per-instance'] as const) {
    it(`a generated lab with every environment type (authMode ${authMode})`, () => {
      // 21 tenants: sandboxes (every 20th) and managers (every 10th) included; 2 instances per flavour.
      const objects = generateLab({ workspaces: 3, tenants: 21, instances: 14 });
      const { inventory, problems } = Inventory.fromObjects(objects.map((object) => ({ object, source: { file: 'generated', document: 1 } })));
      expect(problems).toEqual([]);
      const result = validateLab(inventory, testConfig({ authMode }));
      expect(result.sets).toBe(3 + 21 + 14);
      expectNoProblems(result.problems);
    });
  }

  it('a generated lab at API level e62be9e: inputs in its shape, valid at it, rendered sets valid', () => {
    const objects = generateLab({ workspaces: 3, tenants: 21, instances: 14 }, 'e62be9e');
    const text = JSON.stringify(objects);
    for (const field of ['"deleteAfter"', '"mode"', '"customizationUrls"', '"quota":{"cpu":"']) expect(text).not.toContain(field);
    expect(objects.filter((o) => o.kind === 'Template').every((t) => (t.spec as { cleanup?: unknown }).cleanup)).toBe(true);
    const { inventory, problems } = Inventory.fromObjects(
      objects.map((object) => ({ object, source: { file: 'generated', document: 1 } })),
      undefined,
      'e62be9e',
    );
    expect(problems).toEqual([]);
    const result = validateLab(inventory, testConfig({ apiLevel: 'e62be9e' }));
    expect(result.sets).toBe(3 + 21 + 14);
    expectNoProblems(result.problems);
  });

  it('a rendered-object problem names the set, the object, the field and the input', () => {
    const { config } = loadConfig({ file: join(ROOT, 'examples', 'crownlabs.config.yaml'), env: {}, flags: {} });
    const { inventory } = loadInventory([join(ROOT, 'examples', 'lab')]);
    const sets = renderAll(compose(inventory, config));
    const set = sets.find((s) => s.unit.id === 'instances/tenant-john-doe/espresso-1')!;
    const deployment = structuredClone(set.objects.find((o) => o.kind === 'Deployment')!) as Record<string, any>;
    deployment.spec.replicas = 'one';
    const result = validateRenderedSets([{ unit: set.unit, objects: [deployment as never] }], {
      sourceOf: (parent) => inventory.sourceOf(inventory.instances.get(`${parent.namespace}/${parent.name}`)!),
    });
    expect(result.problems).toEqual([
      {
        severity: 'error',
        file: 'instances/tenant-john-doe/espresso-1',
        kind: 'Deployment',
        name: 'tenant-john-doe/espresso-1',
        field: 'spec.replicas',
        message: expect.stringMatching(/^must be of type integer, not string "one" \(rendered for Instance\/tenant-john-doe\/espresso-1 from .*examples\/lab\/instances\.yaml, document 4\)$/),
      },
    ]);
  });
});
