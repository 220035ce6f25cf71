import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Inventory } from '../../../src/api/inventory.ts';
import { loadInventory } from '../../../src/api/load.ts';
import { formatProblem, type Problem } from '../../../src/api/problems.ts';
import { compose, renderAll } from '../../../src/compose/compose.ts';
import { loadConfig, type ComposerConfig } from '../../../src/config/config.ts';
import { sharedValidator, validateRenderedSets } from '../../../src/validate/validator.ts';
import { generateLab } from '../../support/generate-lab.ts';
import { testConfig } from '../../support/lab.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/**
 * Rendering bugs this validator found in the constructs, reported for them to be fixed. Each must
 * still occur (the last assertion of each test): remove an entry once its construct is fixed, and
 * the labs must then validate with no problem at all.
 *
 * - constructs/instance/virtual-machine.ts patches the VM template with
 *   `toJson_VirtualMachineInstanceSpec(...)` through `addJsonPatch`, which does not resolve the
 *   int-or-string wrapper classes: `domain.memory.guest`, `domain.resources.{requests,limits}.*`
 *   and `readinessProbe.tcpSocket.port` come out empty (`memory: {}`, `tcpSocket: {}`).
 */
const KNOWN_RENDERING_BUGS = [
  /\(VirtualMachine [^)]*\): error: spec\.template\.spec\.domain: no memory requested/,
  /\(VirtualMachine [^)]*\): error: spec\.template\.spec\.readinessProbe\.tcpSocket\.port: required value is missing/,
];

function expectOnlyKnownBugs(problems: readonly Problem[]): void {
  const lines = problems.map(formatProblem);
  expect(lines.filter((l) => !KNOWN_RENDERING_BUGS.some((re) => re.test(l)))).toEqual([]);
  for (const re of KNOWN_RENDERING_BUGS) expect(lines.some((l) => re.test(l)), `known bug ${re} no longer occurs: remove it`).toBe(true);
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
    expectOnlyKnownBugs(result.problems);
  });

  for (const authMode of ['shared', 'per-instance'] as const) {
    it(`a generated lab with every environment type (authMode ${authMode})`, () => {
      // 21 tenants: sandboxes (every 20th) and managers (every 10th) included; 2 instances per flavour.
      const objects = generateLab({ workspaces: 3, tenants: 21, instances: 14 });
      const { inventory, problems } = Inventory.fromObjects(objects.map((object) => ({ object, source: { file: 'generated', document: 1 } })));
      expect(problems).toEqual([]);
      const result = validateLab(inventory, testConfig({ authMode }));
      expect(result.sets).toBe(3 + 21 + 14);
      expectOnlyKnownBugs(result.problems);
    });
  }

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
