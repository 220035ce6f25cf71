/**
 * Inputs that make the composition emit every kind it can: each environment type, persistent or
 * not, in each mode, with and without GUI and MyDrive; tenants with and without a sandbox, users
 * and managers; running and stopped Instances; a snapshot request. Rendered under each auth mode,
 * they tell which kinds the composition can emit: the kinds the controller watches, prunes and
 * conflict-checks, and the RBAC derivation's rendered kinds.
 */
import { Inventory } from '../inputs/inventory.ts';
import { checkObject, type SourcedObject } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import type { KubeObject } from '../inputs/types.ts';
import { defaultConfig, type ComposerConfig } from '../config/config.ts';
import { compose, renderAll } from './compose.ts';
import { DEFAULT_API_LEVEL, kindExistsAt, type ApiLevel } from '../inputs/api-level.ts';

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
  return validatedInventory(representativeInputs(target), DEFAULT_API_LEVEL);
}

/** Inputs validated and defaulted at `level` as files are; any error is a bug here, thrown. */
function validatedInventory(inputs: readonly Record<string, unknown>[], level: ApiLevel): Inventory {
  const problems: Problem[] = [];
  const objects: SourcedObject[] = [];
  for (const o of inputs) checkObject(o, { file: 'representative', document: 1 }, problems, objects, '', level);
  const errors = problems.filter((p) => p.severity === 'error');
  if (errors.length) throw new Error(`representative inputs of level ${level} are invalid: ${errors.map((p) => `${p.name}: ${p.field}: ${p.message}`).join('; ')}`);
  return Inventory.fromObjects(objects, undefined, level).inventory;
}

/** A Workspace and, where the kind exists, a SharedVolume in its namespace, valid at `level`. */
function levelInventory(target: { key: string; value: string }, level: ApiLevel): Inventory {
  const inputs = representativeInputs(target).filter((o) => o.kind === 'Workspace');
  if (kindExistsAt('SharedVolume', level)) {
    inputs.push({ apiVersion: 'crownlabs.polito.it/v1alpha2', kind: 'SharedVolume', metadata: { name: 'rbac-volume', namespace: 'workspace-rbac-ws' }, spec: { prettyName: 'RBAC', size: '1Gi' } });
  }
  return validatedInventory(inputs, level);
}

/**
 * Every object the composition renders for the representative inputs under this configuration
 * (its auth mode decides, e.g., whether per-instance oauth2-proxies and their ConfigMaps exist).
 */
export function representativeObjects(config: ComposerConfig): { objects: KubeObject[]; parentKinds: Set<string> } {
  const inventory = representativeInventory(config.targetLabel);
  // MyDrive needs a known share and snapshots a registry to render; the URL makes the shared mode emit its annotations.
  const variant: ComposerConfig = {
    ...config,
    instancesAuthUrl: config.instancesAuthUrl || 'https://auth.example/oauth2',
    mydriveNfsServerName: config.mydriveNfsServerName || 'nfs.example',
    vmRegistry: config.vmRegistry || 'registry.example',
    vmRegistrySecret: config.vmRegistrySecret || 'registry-push',
    namespaceWhitelist: {},
  };
  const objects: KubeObject[] = [];
  const parentKinds = new Set<string>();
  // Secret values are not needed to know which kinds are rendered (no cookie secret seed here).
  const sets = renderAll(compose(inventory, variant, { secretValues: false }));
  // A level's own kinds, and what a Workspace renders for them, come from inputs of that level.
  if (config.apiLevel !== DEFAULT_API_LEVEL) sets.push(...renderAll(compose(levelInventory(config.targetLabel, config.apiLevel), variant, { secretValues: false })));
  for (const s of sets) {
    parentKinds.add(s.unit.parent.kind);
    // A snapshot's Job is created once, never applied or pruned.
    if (s.unit.parent.kind !== 'InstanceSnapshot') objects.push(...s.objects);
  }
  return { objects, parentKinds };
}

/** The auth modes, each of which renders kinds of its own (per-instance: the oauth2-proxies). */
const AUTH_MODES: readonly ComposerConfig['authMode'][] = ['shared', 'per-instance'];
/** Exposition `both` renders every kind either of the others does (Ingresses and HTTPRoutes). */
const EXPOSITIONS: readonly Pick<ComposerConfig, 'exposition' | 'gatewayRef'>[] = [{ exposition: 'ingress', gatewayRef: '' }, { exposition: 'both', gatewayRef: 'gateway/representative' }];

let kinds: readonly { apiVersion: string; kind: string }[] | undefined;

/**
 * Every kind a resource set can render under any configuration (each auth mode and exposition), sorted: a
 * controller whose configuration changed still finds what the earlier one rendered.
 */
export function renderedKinds(): readonly { apiVersion: string; kind: string }[] {
  if (kinds) return kinds;
  const seen = new Map<string, { apiVersion: string; kind: string }>();
  for (const authMode of AUTH_MODES) {
    for (const exposition of EXPOSITIONS) {
      for (const o of representativeObjects({ ...defaultConfig(), authMode, ...exposition }).objects) seen.set(`${o.apiVersion}/${o.kind}`, { apiVersion: o.apiVersion, kind: o.kind });
    }
  }
  kinds = [...seen].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, k]) => k);
  return kinds;
}
