import { DEFAULT_API_LEVEL, type ApiLevel } from '../../src/inputs/api-level.ts';
import type { InputObject, KubeObject } from '../../src/inputs/types.ts';
import { E62BE9E_ENVIRONMENT_NAME, migrateObjects } from '../../src/migrate/level-migration.ts';

export interface LabSize {
  workspaces: number;
  tenants: number;
  instances: number;
}

const TARGET = { 'crownlabs.polito.it/operator-selector': 'production' };

/** One Template per environment flavour, so a generated lab exercises every construct. */
const FLAVOURS = [
  { name: 'vm', environmentType: 'VirtualMachine', persistent: false },
  { name: 'pvm', environmentType: 'VirtualMachine', persistent: true },
  { name: 'cloud', environmentType: 'CloudVM', persistent: true, guiEnabled: false },
  { name: 'desk', environmentType: 'Container', persistent: false },
  { name: 'pdesk', environmentType: 'Container', persistent: true },
  { name: 'app', environmentType: 'Standalone', persistent: false, rewriteURL: true },
  { name: 'exam', environmentType: 'Container', persistent: false, mode: 'Exam', mountMyDriveVolume: false },
] as const;

/**
 * A synthetic lab of the given size, as validated-and-defaulted input objects would look.
 * Deterministic: the same size gives the same objects. Instances round-robin over tenants and
 * flavours; every tenant is enrolled in two workspaces (manager of one in ten).
 * At `e62be9e` the same lab in that level's shape, as `crownlabs migrate` writes it (the exam
 * flavour's mode is not carried), with the environment names its pattern refuses lengthened.
 */
export function generateLab(size: LabSize, level: ApiLevel = DEFAULT_API_LEVEL): InputObject[] {
  if (level === DEFAULT_API_LEVEL) return generate(size, (name) => name);
  const migrated = migrateObjects(generate(size, (name) => (E62BE9E_ENVIRONMENT_NAME.test(name) ? name : `${name}-env`)) as KubeObject[]);
  const errors = migrated.flatMap((m) => m.problems.filter((p) => p.severity === 'error'));
  if (errors.length) throw new Error(`generated lab not migratable to ${level}: ${errors[0].message}`);
  return migrated.map((m) => m.after as InputObject);
}

function generate(size: LabSize, environmentName: (flavour: string) => string): InputObject[] {
  const out: InputObject[] = [];
  for (let w = 0; w < size.workspaces; w++) {
    out.push({
      apiVersion: 'crownlabs.polito.it/v1alpha1',
      kind: 'Workspace',
      metadata: { name: `ws-${w}`, labels: { ...TARGET } },
      spec: { prettyName: `Course ${w}`, quota: { cpu: 8, memory: '16Gi', instances: 4 } },
    });
    for (const f of FLAVOURS) {
      out.push({
        apiVersion: 'crownlabs.polito.it/v1alpha2',
        kind: 'Template',
        metadata: { name: `${f.name}-${w}`, namespace: `workspace-ws-${w}` },
        spec: {
          prettyName: `${f.name} ${w}`,
          description: 'generated',
          'workspace.crownlabs.polito.it/WorkspaceRef': { name: `ws-${w}` },
          deleteAfter: 'never',
          environmentList: [
            {
              name: environmentName(f.name),
              image: f.environmentType === 'CloudVM' ? `https://images.example/${f.name}.qcow2` : `registry.example/${f.name}:${w}`,
              environmentType: f.environmentType,
              guiEnabled: 'guiEnabled' in f ? f.guiEnabled : true,
              disableControls: false,
              persistent: f.persistent,
              mode: 'mode' in f ? f.mode : 'Standard',
              rewriteURL: 'rewriteURL' in f ? f.rewriteURL : false,
              mountMyDriveVolume: 'mountMyDriveVolume' in f ? f.mountMyDriveVolume : true,
              resources: { cpu: 2, reservedCPUPercentage: 50, memory: '2Gi', ...(f.persistent ? { disk: '10Gi' } : {}) },
            },
          ],
        },
      });
    }
  }
  for (let t = 0; t < size.tenants; t++) {
    const ws = [t % size.workspaces, (t + 1) % size.workspaces];
    out.push({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: `user.${t}`, labels: { ...TARGET } },
      spec: {
        firstName: `User`,
        lastName: `Number ${t}`,
        email: `user.${t}@example.com`,
        createSandbox: t % 20 === 0,
        workspaces: [...new Set(ws)].map((w, i) => ({ name: `ws-${w}`, role: i === 0 && t % 10 === 0 ? 'manager' : 'user' })),
        publicKeys: [`ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGenerated${t} user${t}@lab`],
      },
    });
  }
  for (let i = 0; i < size.instances; i++) {
    const t = i % size.tenants;
    const w = t % size.workspaces;
    const f = FLAVOURS[i % FLAVOURS.length];
    out.push({
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Instance',
      metadata: { name: `inst-${i}`, namespace: `tenant-user-${t}` },
      spec: {
        'template.crownlabs.polito.it/TemplateRef': { name: `${f.name}-${w}`, namespace: `workspace-ws-${w}` },
        'tenant.crownlabs.polito.it/TenantRef': { name: `user.${t}` },
        running: i % 5 !== 4,
      },
    });
  }
  return out;
}
