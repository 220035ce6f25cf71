/**
 * Inputs that make the composition emit every kind it can: each environment type, persistent or
 * not, in each mode, with and without GUI and MyDrive; tenants with and without a sandbox, users
 * and managers; running and stopped Instances; a snapshot request. The RBAC derivation renders them (with each auth
 * mode) to learn which kinds the controller writes.
 */
import { Inventory } from '../inputs/inventory.ts';
import { checkObject, type SourcedObject } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';

const TYPES = ['VirtualMachine', 'CloudVM', 'Container', 'Standalone'] as const;
const MODES = ['Standard', 'Exam', 'Exercise'] as const;

export function representativeInputs(target: { key: string; value: string }): Record<string, unknown>[] {
  const labels = { [target.key]: target.value };
  const ws = 'rbac-ws';
  const wsNs = `workspace-${ws}`;
  const out: Record<string, unknown>[] = [
    { apiVersion: 'crownlabs.polito.it/v1alpha1', kind: 'Workspace', metadata: { name: ws, labels }, spec: { prettyName: 'RBAC', quota: { cpu: 8, memory: '16Gi', instances: 4 } } },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: 'rbac.user', labels },
      spec: { firstName: 'R', lastName: 'User', email: 'user@example.org', createSandbox: true, workspaces: [{ name: ws, role: 'user' }], publicKeys: ['ssh-ed25519 AAAA u@x'] },
    },
    {
      apiVersion: 'crownlabs.polito.it/v1alpha2',
      kind: 'Tenant',
      metadata: { name: 'rbac.manager', labels },
      spec: { firstName: 'R', lastName: 'Manager', email: 'manager@example.org', workspaces: [{ name: ws, role: 'manager' }] },
    },
  ];
  let n = 0;
  let stoppedPersistentVm = '';
  for (const environmentType of TYPES) {
    for (const persistent of [false, true]) {
      for (const mode of MODES) {
        for (const guiEnabled of [true, false]) {
          const name = `t${n++}`;
          out.push({
            apiVersion: 'crownlabs.polito.it/v1alpha2',
            kind: 'Template',
            metadata: { name, namespace: wsNs },
            spec: {
              prettyName: name,
              description: 'representative',
              'workspace.crownlabs.polito.it/WorkspaceRef': { name: ws },
              environmentList: [
                {
                  name: 'env',
                  image: environmentType === 'CloudVM' ? 'https://images.example/x.qcow2' : 'registry.example/x:1',
                  environmentType,
                  persistent,
                  mode,
                  guiEnabled,
                  rewriteURL: environmentType === 'Standalone',
                  mountMyDriveVolume: mode === 'Standard',
                  resources: { cpu: 1, reservedCPUPercentage: 50, memory: '1Gi', ...(persistent ? { disk: '10Gi' } : {}) },
                },
              ],
            },
          });
          if (environmentType === 'VirtualMachine' && persistent && !stoppedPersistentVm) stoppedPersistentVm = `${name}-off`;
          for (const running of [true, false]) {
            out.push({
              apiVersion: 'crownlabs.polito.it/v1alpha2',
              kind: 'Instance',
              metadata: { name: `${name}-${running ? 'on' : 'off'}`, namespace: 'tenant-rbac-user' },
              spec: {
                running,
                'template.crownlabs.polito.it/TemplateRef': { name, namespace: wsNs },
                'tenant.crownlabs.polito.it/TenantRef': { name: 'rbac.user' },
              },
            });
          }
        }
      }
    }
  }
  // A snapshot of a stopped persistent VM: the one request that renders a snapshot Job.
  out.push({
    apiVersion: 'crownlabs.polito.it/v1alpha2',
    kind: 'InstanceSnapshot',
    metadata: { name: 'snap', namespace: 'tenant-rbac-user' },
    spec: { instanceRef: { name: stoppedPersistentVm, namespace: 'tenant-rbac-user' }, imageName: 'snap' },
  });
  return out;
}

/** The representative inputs, validated and defaulted as files are. */
export function representativeInventory(target: { key: string; value: string }): Inventory {
  const problems: Problem[] = [];
  const objects: SourcedObject[] = [];
  for (const o of representativeInputs(target)) checkObject(o, { file: 'representative', document: 1 }, problems, objects);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`representative inputs are invalid: ${errors.map((p) => `${p.name}: ${p.field}: ${p.message}`).join('; ')}`);
  return Inventory.fromObjects(objects).inventory;
}
