import { ApiObject, App, type Chart } from 'cdk8s';
import { InstanceChart } from '../../constructs/instance/instance-chart.ts';
import { SnapshotChart } from '../../constructs/snapshot/snapshot-chart.ts';
import { SharedVolumeChart } from '../../constructs/shared-volume/shared-volume-chart.ts';
import { TenantChart } from '../../constructs/tenant/tenant-chart.ts';
import { WorkspaceChart } from '../../constructs/workspace/workspace-chart.ts';
import type { Inventory } from '../inputs/inventory.ts';
import { PUBLIC_EXPOSURE_KEY, RecordedLookups } from '../inputs/lookups.ts';
import type { Problem } from '../inputs/problems.ts';
import { objectKey, type InstanceSnapshot, type KubeObject, type Tenant } from '../inputs/types.ts';
import { cookieSecretSeedProblem, type ComposerConfig } from '../config/config.ts';
import { planInstance, type InstancePlan } from '../model/instance-plan.ts';
import type { PublicExposureSource } from '../model/public-exposure.ts';
import { filePublicExposureSource } from './file-public-exposure.ts';
import { environmentChildName } from '../model/level-rendering.ts';
import { composerAnnotations, composerLabels, hasAllLabels, parentKey, type ParentRef } from '../model/labels.ts';
import { MYDRIVE_ACCESS, nfsShareFromConfig, type NfsShare } from '../model/mydrive.ts';
import { tenantNamespaceName, workspaceNamespaceName } from '../model/naming.ts';
import { workspaceSharedVolumes } from '../model/shared-volume.ts';
import { requestTag, snapshotConfigProblem, validateSnapshotRequest } from '../model/snapshot.ts';
import { namespaceTenantKey } from './dependency-index.ts';
import { unitId } from '../model/set-id.ts';
import { objectJson } from './object-json.ts';
import { foldMyDriveProblems } from './mydrive-setting.ts';
import { enrolledWorkspaces, matchesTargetLabel, splitWorkspaces, tenantNamespaceLabels, tenantQuota } from '../model/tenant-plan.ts';

/**
 * One resource set: the objects rendered for one parent (a Workspace, a Tenant, an Instance).
 * Built on demand, one cdk8s App each: synthesis cost stays linear in the number of sets.
 */
export interface RenderUnit {
  /** Stable id, also the file name stem of the set: `instances/<ns>/<name>`, `tenants/<name>`, … */
  readonly id: string;
  readonly parent: ParentRef;
  /**
   * Input keys (`Kind/ns/name`, and `…#managers`/`…#tenant` for reverse lookups) the composition of
   * this set looked up, found or not, its parent's included: recorded, never listed by hand. The
   * render cache hashes them; watch mode and the controller re-render on their change.
   */
  readonly dependsOn: readonly string[];
  /** An Instance's plan, which the set is built from (the controller derives its status from it too). */
  readonly plan?: InstancePlan;
  build(app: App): Chart;
}

/** What only the controller knows; files and gitops use the defaults. */
export interface ComposeOptions {
  /** The NFS share behind a tenant's MyDrive (controller: the bound PV). Default: configuration. */
  myDriveShare?: (tenant: Tenant) => NfsShare | undefined;
  /** The MAC address of a persistent VM, by namespace and name (controller: its live VM and VMI, observedMacAddress). Default: none. */
  vmMacAddress?: (namespace: string, name: string) => string | undefined;
  /**
   * An Instance's public-exposure allocation (controller: its allocator's reservation). Default:
   * every asking Instance allocated in a fixed order (src/compose/file-public-exposure.ts).
   */
  publicExposure?: PublicExposureSource;
  /** Keep-alive of a personal namespace (controller: docs/behaviour.md §5.3 step 5). Default: always kept. */
  keepPersonalNamespace?: (tenant: Tenant) => boolean;
  /** Compose only the sets of these parents (watch mode); default: all. */
  only?: (parent: ParentRef) => boolean;
  /**
   * Compose only this parent's set (one reconcile), looked up by its key: a reconcile costs the
   * same whatever the number of parents (`only` is asked about every one). Overrides `only`.
   */
  parent?: ParentRef;
  /**
   * Image tag of a snapshot's Job (controller: the clock when it creates the Job). Default: the
   * snapshot's creationTimestamp (`requestTag`), so files render deterministically.
   */
  snapshotTag?: (snapshot: InstanceSnapshot) => string;
  /**
   * false: Secret values are never written (the gitops tree, RBAC derivation), so secrets that
   * only shape values (the cookie secret seed) are not required. Default true.
   */
  secretValues?: boolean;
}

export interface Composition {
  units: RenderUnit[];
  problems: Problem[];
  /**
   * Parent key → the keys its composition looked up, for every parent composed, also those that
   * rendered nothing (a missing Template, a namespace off the whitelist): the controller retries
   * them when one of these keys changes.
   */
  dependencies: Map<string, readonly string[]>;
  /** Keys of the parents whose composition reported a problem (a warning): see RenderCache.reuse. */
  reported: Set<string>;
}

const KIND_ORDER: Record<string, number> = { Workspace: 0, Tenant: 1, SharedVolume: 2, Instance: 3, InstanceSnapshot: 4 };

/** The order sets are rendered and written in: workspaces, tenants, shared volumes, instances, snapshots, each by id. */
export function compareUnits(a: Pick<RenderUnit, 'id' | 'parent'>, b: Pick<RenderUnit, 'id' | 'parent'>): number {
  return KIND_ORDER[a.parent.kind] - KIND_ORDER[b.parent.kind] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** Decides which resource sets exist and how each is built. Pure: no I/O, clock or randomness. */
export function compose(inventory: Inventory, config: ComposerConfig, options: ComposeOptions = {}): Composition {
  const units: RenderUnit[] = [];
  const problems: Problem[] = [];
  const reported = new Set<string>();
  // `obj` is the parent being composed.
  const notice = (obj: KubeObject, message: string) => {
    const src = inventory.sourceOf(obj);
    problems.push({ severity: 'warning', file: src?.file, document: src?.document, kind: obj.kind, name: objectKey(obj), message });
    reported.add(parentKey({ kind: obj.kind as ParentRef['kind'], name: obj.metadata.name, namespace: obj.metadata.namespace }));
  };
  const renderedTenants = new Map<string, Tenant>();
  /** Personal namespaces of the Tenants skipped for their target label: nothing creates them. */
  const skippedTenants = new Map<string, Tenant>();
  const dependencies = new Map<string, readonly string[]>();
  /** The parent's dependencies as recorded so far (a unit's are final when it is pushed). */
  const recorded = (parent: ParentRef, reads: RecordedLookups): readonly string[] => {
    const keys = reads.sorted();
    dependencies.set(parentKey(parent), keys);
    return keys;
  };

  // Without its seed a per-instance cookie secret could be computed from public data: no Instance renders.
  const seedProblem = options.secretValues === false ? undefined : cookieSecretSeedProblem(config);
  if (seedProblem) problems.push(seedProblem);

  const one = options.parent;
  const wanted = one ? (p: ParentRef) => p.kind === one.kind && p.name === one.name && (p.namespace ?? '') === (one.namespace ?? '') : (options.only ?? (() => true));
  /** The objects of a kind to consider: with `parent`, that one object (or none). */
  const candidates = <T>(map: Map<string, T>, kind: ParentRef['kind']): Iterable<T> => {
    if (!one) return map.values();
    const o = one.kind === kind ? map.get(one.namespace ? `${one.namespace}/${one.name}` : one.name) : undefined;
    return o ? [o] : [];
  };
  const myDriveShare = options.myDriveShare ?? ((t: Tenant) => nfsShareFromConfig(config, t.metadata.name));

  for (const workspace of candidates(inventory.workspaces, 'Workspace')) {
    if (!wanted({ kind: 'Workspace', name: workspace.metadata.name })) continue;
    if (!matchesTargetLabel(workspace, config)) {
      notice(workspace, `skipped: no target label ${config.targetLabel.key}=${config.targetLabel.value}`);
      continue;
    }
    const parent: ParentRef = { kind: 'Workspace', name: workspace.metadata.name };
    units.push({
      id: unitId(parent),
      parent,
      dependsOn: recorded(parent, new RecordedLookups(inventory, parentKey(parent))),
      build: (app) => new WorkspaceChart(app, 'workspace', { workspace, config, sharedVolumes: workspaceSharedVolumes(workspace, inventory.level), chartLabels: composerLabels(parent) }),
    });
  }

  for (const tenant of inventory.tenants.values()) {
    if (!matchesTargetLabel(tenant, config)) {
      if (wanted({ kind: 'Tenant', name: tenant.metadata.name })) notice(tenant, `skipped: no target label ${config.targetLabel.key}=${config.targetLabel.value}`);
      skippedTenants.set(tenantNamespaceName(tenant.metadata.name), tenant);
      continue;
    }
    renderedTenants.set(tenantNamespaceName(tenant.metadata.name), tenant);
    const parent: ParentRef = { kind: 'Tenant', name: tenant.metadata.name };
    if (!wanted(parent)) continue;
    const reads = new RecordedLookups(inventory, parentKey(parent));
    const { existing } = splitWorkspaces(tenant, { get: (name) => reads.workspace(name) });
    const quota = tenantQuota(tenant, enrolledWorkspaces(existing).map((e) => e.workspace), config, inventory.level);
    const share = myDriveShare(tenant);
    const keep = options.keepPersonalNamespace ? options.keepPersonalNamespace(tenant) : true;
    units.push({
      id: unitId(parent),
      parent,
      dependsOn: recorded(parent, reads),
      build: (app) =>
        new TenantChart(app, 'tenant', { tenant, config, quota, keepPersonalNamespace: keep, myDriveShare: share, myDriveMirror: MYDRIVE_ACCESS[inventory.level] === 'mirror', chartLabels: composerLabels(parent) }),
    });
  }

  // SharedVolumes (docs/behaviour.md §16.7), in namespaces with the target label: a rendered
  // Workspace's namespace carries it, else the namespace as the inputs hold it.
  const renderedWorkspaceNamespaces = new Set(units.filter((u) => u.parent.kind === 'Workspace').map((u) => workspaceNamespaceName(u.parent.name)));
  for (const sv of candidates(inventory.sharedVolumes, 'SharedVolume')) {
    const ns = sv.metadata.namespace ?? '';
    const parent: ParentRef = { kind: 'SharedVolume', name: sv.metadata.name, namespace: ns };
    if (!wanted(parent)) continue;
    const reads = new RecordedLookups(inventory, parentKey(parent));
    const live = reads.namespace(ns);
    const targeted = live ? live.metadata.labels?.[config.targetLabel.key] === config.targetLabel.value : renderedWorkspaceNamespaces.has(ns);
    const dependsOn = recorded(parent, reads);
    if (!targeted) {
      notice(sv, `skipped: namespace ${ns} lacks the target label ${config.targetLabel.key}=${config.targetLabel.value}`);
      continue;
    }
    units.push({
      id: unitId(parent),
      parent,
      dependsOn,
      build: (app) =>
        new SharedVolumeChart(app, 'shared-volume', {
          sharedVolume: sv,
          storageClassName: config.sharedVolumeStorageClass,
          provisioningImage: config.volumeProvisioningImg,
          chartLabels: composerLabels(parent),
        }),
    });
  }

  const namespaceLabels = (ns: string, reads: RecordedLookups): Record<string, string> | undefined => {
    const live = reads.namespace(ns);
    if (live) return live.metadata.labels ?? {};
    reads.note(namespaceTenantKey(ns));
    const tenant = renderedTenants.get(ns);
    return tenant ? tenantNamespaceLabels(tenant, config) : undefined;
  };

  /**
   * The skipped Tenant whose personal namespace `ns` is, when that namespace is not live either:
   * its Instances would go into a namespace nothing creates (the controller, which reads the live
   * namespaces, finds none and renders nothing for them either).
   */
  const skippedTenantOf = (ns: string, reads: RecordedLookups): Tenant | undefined => {
    if (reads.namespace(ns)) return undefined;
    // Composed again when that Tenant changes (gains the label).
    reads.note(namespaceTenantKey(ns));
    return skippedTenants.get(ns);
  };
  const skippedMessage = (t: Tenant) =>
    `skipped: its namespace belongs to Tenant ${t.metadata.name}, which is skipped (no target label ${config.targetLabel.key}=${config.targetLabel.value}), so nothing creates the namespace`;

  // Files: an allocation depends on every Instance allocated with it (PUBLIC_EXPOSURE_KEY).
  const fileAllocation = options.publicExposure ? undefined : filePublicExposureSource(inventory, config);
  const peSource = (reads: RecordedLookups): PublicExposureSource =>
    options.publicExposure ??
    ((i, wanted) => {
      reads.note(PUBLIC_EXPOSURE_KEY);
      return fileAllocation!(i, wanted);
    });
  for (const instance of candidates(inventory.instances, 'Instance')) {
    const ns = instance.metadata.namespace ?? '';
    const parent: ParentRef = { kind: 'Instance', name: instance.metadata.name, namespace: ns };
    if (!wanted(parent)) continue;
    const reads = new RecordedLookups(inventory, parentKey(parent));
    const skippedTenant = skippedTenantOf(ns, reads);
    if (skippedTenant) {
      notice(instance, skippedMessage(skippedTenant));
      recorded(parent, reads);
      continue;
    }
    const labels = namespaceLabels(ns, reads);
    if (labels && !hasAllLabels(labels, config.namespaceWhitelist)) {
      notice(instance, `skipped: namespace ${ns} lacks the whitelist labels ${formatLabels(config.namespaceWhitelist)}`);
      recorded(parent, reads);
      continue;
    }
    if (seedProblem) continue;
    const result = planInstance(instance, reads, config, myDriveShare, { vmMacAddress: options.vmMacAddress, publicExposure: peSource(reads) });
    problems.push(...result.problems);
    if (result.problems.length > 0) reported.add(parentKey(parent));
    const plan = result.plan;
    const dependsOn = recorded(parent, reads);
    if (!plan) continue;
    units.push({
      id: unitId(parent),
      parent,
      plan,
      dependsOn,
      build: (app) => new InstanceChart(app, 'instance', { plan, config, chartLabels: composerLabels(parent) }),
    });
  }

  // Snapshots (docs/behaviour.md §9): a request that fails validation renders nothing (the controller reports it).
  const tagOf = options.snapshotTag ?? requestTag;
  for (const snapshot of candidates(inventory.snapshots, 'InstanceSnapshot')) {
    const ns = snapshot.metadata.namespace ?? '';
    const parent: ParentRef = { kind: 'InstanceSnapshot', name: snapshot.metadata.name, namespace: ns };
    if (!wanted(parent)) continue;
    const reads = new RecordedLookups(inventory, parentKey(parent));
    const skippedTenant = skippedTenantOf(ns, reads);
    if (skippedTenant) {
      notice(snapshot, skippedMessage(skippedTenant));
      recorded(parent, reads);
      continue;
    }
    const labels = namespaceLabels(ns, reads);
    if (labels && !hasAllLabels(labels, config.namespaceWhitelist)) {
      notice(snapshot, `skipped: namespace ${ns} lacks the whitelist labels ${formatLabels(config.namespaceWhitelist)}`);
      recorded(parent, reads);
      continue;
    }
    const request = validateSnapshotRequest(snapshot, reads);
    const dependsOn = recorded(parent, reads);
    const problem = snapshotConfigProblem(config) ?? (request.ok ? undefined : request.message);
    if (problem || !request.ok) {
      notice(snapshot, `skipped: ${problem}`);
      continue;
    }
    const { instance, template, environment } = request;
    const claimName = environmentChildName(instance, environment.name, template.spec.environmentList.length, inventory.level);
    const tag = tagOf(snapshot);
    units.push({
      id: unitId(parent),
      parent,
      dependsOn,
      build: (app) => new SnapshotChart(app, 'snapshot', { snapshot, instance, claimName, config, tag, chartLabels: composerLabels(parent) }),
    });
  }

  // From files, a MyDrive mount without its Secret comes down to one missing setting: said once, first.
  if (!options.myDriveShare && !config.mydriveNfsServerName) foldMyDriveProblems(problems);
  units.sort(compareUnits);
  return { units, problems, dependencies, reported };
}

/** Synthesises one resource set into plain objects, each annotated with the input that produced it. */
export function renderUnit(unit: RenderUnit): KubeObject[] {
  const app = new App();
  const chart = unit.build(app);
  const annotations = composerAnnotations(unit.parent);
  // Key order is left to the emitters: YAML writers sort keys, API requests do not need them sorted.
  return (chartObjects(chart) as KubeObject[]).map((obj) => {
    obj.metadata.annotations = { ...obj.metadata.annotations, ...annotations };
    return obj;
  });
}

/**
 * `chart.toJson()`, minus its App-wide passes when they have nothing to do. Chart.toJson resolves
 * construct dependencies and runs validations across the whole App before serialising objects in
 * dependency order; our sets declare neither, and those passes cost ~20% of a render. A set that
 * does declare one goes through chart.toJson() unchanged.
 */
export function chartObjects(chart: Chart): unknown[] {
  const nodes = chart.node.findAll();
  const plain = nodes.every((c) => c.node.dependencies.length === 0 && c.node.validate().length === 0);
  if (!plain) return chart.toJson();
  return nodes.filter((c): c is ApiObject => ApiObject.isApiObject(c)).map(objectJson);
}

export interface RenderedSet {
  unit: RenderUnit;
  objects: KubeObject[];
}

/** Every set of a composition, rendered in order. */
export function renderAll(composition: Composition, onProgress?: (done: number, total: number) => void): RenderedSet[] {
  return composition.units.map((unit, i) => {
    const objects = renderUnit(unit);
    onProgress?.(i + 1, composition.units.length);
    return { unit, objects };
  });
}

function formatLabels(labels: Record<string, string>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
