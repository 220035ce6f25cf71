import { Inventory } from '../../src/inputs/inventory.ts';
import { parseInputText } from '../../src/inputs/parse.ts';
import type { Problem } from '../../src/inputs/problems.ts';
import type { KubeObject } from '../../src/inputs/types.ts';
import { compose, renderAll, type ComposeOptions, type RenderedSet } from '../../src/compose/compose.ts';
import { defaultConfig, type ComposerConfig } from '../../src/config/config.ts';
import type { ApiLevel } from '../../src/inputs/api-level.ts';
import { validateRenderedSets } from '../../src/validate/validator.ts';

/** Builds an inventory from YAML text at `level`, failing loudly on any input error (tests give good input). */
export function inventoryFrom(yamlText: string, level?: ApiLevel): Inventory {
  const parsed = parseInputText(yamlText, 'test.yaml', level);
  const { inventory, problems } = Inventory.fromObjects(parsed.objects, undefined, level);
  const errors = [...parsed.problems, ...problems].filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`bad test input: ${JSON.stringify(errors, null, 2)}`);
  return inventory;
}

/** A cookie secret seed for tests (production seeds come from the environment or the Secret). */
export const TEST_SEED = 'test-seed-0123456789abcdef0123456789abcdef';

export function testConfig(overrides: Partial<ComposerConfig> = {}): ComposerConfig {
  return { ...defaultConfig(), mydriveNfsServerName: 'nfs.example', mydriveNfsPathTemplate: '/export/{pvc}', cookieSecretSeed: TEST_SEED, ...overrides };
}

export interface Rendered {
  inventory: Inventory;
  sets: RenderedSet[];
  objects: KubeObject[];
  problems: Problem[];
  find(kind: string, name: string, namespace?: string): KubeObject | undefined;
  get(kind: string, name: string, namespace?: string): KubeObject;
}

export interface RenderOptions {
  compose?: ComposeOptions;
  /** Every rendered object must pass the vendored schemas (a field in the wrong place fails the test). */
  schemas?: boolean;
}

/** Renders YAML text at the config's API level. */
export function render(yamlText: string, config: ComposerConfig = testConfig(), options: RenderOptions = {}): Rendered {
  const inventory = inventoryFrom(yamlText, config.apiLevel);
  const composition = compose(inventory, config, options.compose);
  const sets = renderAll(composition);
  if (options.schemas) {
    const schemaErrors = validateRenderedSets(sets).problems.filter((p) => p.severity === 'error');
    if (schemaErrors.length) throw new Error(`rendered objects fail their schemas: ${JSON.stringify(schemaErrors, null, 2)}`);
  }
  const objects = sets.flatMap((s) => s.objects);
  const find = (kind: string, name: string, namespace?: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace));
  return {
    inventory,
    sets,
    objects,
    problems: composition.problems,
    find,
    get(kind, name, namespace) {
      const o = find(kind, name, namespace);
      if (!o) throw new Error(`no ${kind} ${namespace ? `${namespace}/` : ''}${name} among ${objects.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
      return o;
    },
  };
}

/** A small lab: tenants, workspaces, and a Template/Instance pair built from the parameters. */
export function lab(opts: {
  env: Record<string, unknown> | Record<string, unknown>[];
  instance?: Record<string, unknown>;
  instanceMeta?: Record<string, unknown>;
  /** Merged into the Template's spec. */
  template?: Record<string, unknown>;
  extra?: string;
}): string {
  const envs = Array.isArray(opts.env) ? opts.env : [opts.env];
  const environmentList = envs.map((e, i) => ({
    name: `env${i}`,
    image: 'registry.example/img:1',
    environmentType: 'VirtualMachine',
    resources: { cpu: 2, reservedCPUPercentage: 25, memory: '2G' },
    ...e,
  }));
  const docs: unknown[] = [
    {
      apiVersion: 'crownlabs.polito.it/v1alpha1',
      kind: 'Workspace',
      metadata: { name: 'tea', labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { prettyName: 'Tea', quota: { cpu: 8, memory: '15Gi', instances: 3 } },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: 'john.doe', labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { firstName: 'John', lastName: 'Doe', email: 'john@example.com', workspaces: [{ name: 'tea', role: 'user' }], publicKeys: ['ssh-ed25519 AAAAjohn john@pc'] },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: 'mary.manager', labels: { 'crownlabs.polito.it/operator-selector': 'production' } },
      spec: { firstName: 'Mary', lastName: 'Manager', email: 'Mary@example.com', workspaces: [{ name: 'tea', role: 'manager' }], publicKeys: ['ssh-rsa AAAAmary mary@pc'] },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Template',
      metadata: { name: 'tmpl', namespace: 'workspace-tea' },
      spec: { prettyName: 'T', description: 'd', 'workspace.crownlabs.polito.it/WorkspaceRef': { name: 'tea' }, environmentList, ...opts.template },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: 'inst.one', namespace: 'tenant-john-doe', uid: '00000000-0000-4000-8000-000000000001', ...opts.instanceMeta },
      spec: {
        'template.crownlabs.polito.it/TemplateRef': { name: 'tmpl', namespace: 'workspace-tea' },
        'tenant.crownlabs.polito.it/TenantRef': { name: 'john.doe' },
        ...opts.instance,
      },
    },
  ];
  return docs.map((d) => JSON.stringify(d)).join('\n---\n') + (opts.extra ? `\n---\n${opts.extra}` : '');
}
