import { App, type Chart } from 'cdk8s';
import { GitopsAppsChart, GitopsRootChart } from '../../constructs/gitops/gitops-root-chart.ts';
import type { KubeObject } from '../inputs/types.ts';
import { chartObjects, renderUnit, type RenderedSet, type RenderUnit } from '../compose/compose.ts';
import { exposure } from '../model/exposition.ts';
import type { ComposerConfig } from '../config/config.ts';
import { sandboxNamespaceName, tenantNamespaceName, workspaceNamespaceName } from '../model/naming.ts';
import type { GroupKind } from '../../constructs/gitops/argo-project.ts';
import { objectToYaml } from './yaml-emitter.ts';

/**
 * The Argo CD sink: the same rendered sets as `synth`, laid out for Argo CD (docs/architecture.md, "Conventions"):
 *
 *   root/          AppProject + app-of-apps Application `crownlabs-root` (apply once by hand)
 *   apps/          one Application per workspace, tenant and chunk of a namespace's instances
 *   workspaces/<ws>/, tenants/<tenant>/, instances/<namespace>[.<n>]/
 *                  one file per object (`<Kind>_<namespace>_<name>.yaml`) and a kustomization.yaml
 *
 * Differences from `synth`, and only these: no owner references (they need live UIDs), Secret values
 * replaced by a reference the cluster resolves, and Argo CD annotations (sync waves, and the
 * retention options of `retentionOptions`).
 */
export interface GitopsApp {
  name: string;
  folder: string;
  /** The Application's destination namespace: the namespace its objects are about. */
  namespace: string;
  syncWave: number;
  /** The resource sets this Application deploys. */
  sets: GitopsSet[];
}

/** What the tree needs of a resource set: its identity, its size, and its files (computed lazily). */
export interface GitopsSet {
  unit: { id: string; parent: RenderedSet['unit']['parent'] };
  objectCount: number;
}

export { gitopsConfigProblems } from './gitops-config.ts';

const SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';
const APPS_PER_CHART = 256;
const SYNC_OPTIONS_ANNOTATION = 'argocd.argoproj.io/sync-options';

/**
 * Namespaces first, then quotas, RBAC and policies, then config, then workloads with their PVCs.
 * Argo CD waits until a wave is healthy before the next one, and a PVC of a WaitForFirstConsumer
 * StorageClass binds only once a pod uses it: in a wave before its Deployment it would never be.
 */
export function objectSyncWave(kind: string): number {
  switch (kind) {
    case 'Namespace':
      return 0;
    case 'ResourceQuota':
    case 'LimitRange':
    case 'ClusterRole':
    case 'ClusterRoleBinding':
    case 'Role':
    case 'RoleBinding':
    case 'NetworkPolicy':
    case 'ServiceAccount':
      return 1;
    case 'Secret':
    case 'ExternalSecret':
    case 'SealedSecret':
    case 'ConfigMap':
      return 2;
    default:
      return 3;
  }
}

/** Groups rendered sets into Applications small enough for Argo CD's status to stay well below etcd's limits. */
export function groupApplications(sets: readonly GitopsSet[], maxObjects: number): GitopsApp[] {
  const apps: GitopsApp[] = [];
  const byNamespace = new Map<string, GitopsSet[]>();
  for (const set of sets) {
    const p = set.unit.parent;
    if (p.kind === 'Instance') {
      const list = byNamespace.get(p.namespace ?? '') ?? [];
      list.push(set);
      byNamespace.set(p.namespace ?? '', list);
    } else {
      const app = singleSetApplication(set);
      if (app) apps.push(app);
    }
  }
  for (const [ns, list] of [...byNamespace].sort(([a], [b]) => (a < b ? -1 : 1))) apps.push(...instanceApplications(ns, list, maxObjects));
  return apps;
}

/** The Application of a Workspace's or Tenant's set; none for an InstanceSnapshot's (one-shot Jobs whose outcome only the controller follows) or a SharedVolume's (its phase and its deletion hold need the controller). */
export function singleSetApplication(set: GitopsSet): GitopsApp | undefined {
  const p = set.unit.parent;
  if (p.kind === 'Workspace') return { name: `crownlabs-workspace-${p.name}`, folder: `workspaces/${p.name}`, namespace: workspaceNamespaceName(p.name), syncWave: 1, sets: [set] };
  if (p.kind === 'Tenant') return { name: `crownlabs-tenant-${p.name}`, folder: `tenants/${p.name}`, namespace: tenantNamespaceName(p.name), syncWave: 2, sets: [set] };
  return undefined;
}

/** The Applications of namespace `ns`'s Instance sets (`list`, in name order): chunks of at most maxObjects objects. */
export function instanceApplications(ns: string, list: readonly GitopsSet[], maxObjects: number): GitopsApp[] {
  const chunks: GitopsSet[][] = [[]];
  let count = 0;
  for (const set of list) {
    if (count + set.objectCount > maxObjects && chunks[chunks.length - 1].length > 0) {
      chunks.push([]);
      count = 0;
    }
    chunks[chunks.length - 1].push(set);
    count += set.objectCount;
  }
  // `.n`: a namespace name has no dot, so chunk 1 of `tenant-x` is never the namespace `tenant-x-1`.
  return chunks.map((chunk, i) => {
    const suffix = chunks.length > 1 ? `.${i + 1}` : '';
    return { name: `crownlabs-instances-${ns}${suffix}`, folder: `instances/${ns}${suffix}`, namespace: ns, syncWave: 3, sets: chunk };
  });
}

export function objectFileName(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${obj.kind}_${ns}_${obj.metadata.name}.yaml` : `${obj.kind}_${obj.metadata.name}.yaml`;
}

/** What an object looks like in git: Argo CD annotations, no owner references, no secret values. */
export function gitopsObject(obj: KubeObject, config: ComposerConfig): KubeObject | undefined {
  if (obj.kind === 'Secret' && obj.apiVersion === 'v1') {
    const ref = secretReference(obj, config);
    if (!ref) return undefined;
    obj = ref;
  }
  const { ownerReferences: _owners, ...metadata } = obj.metadata;
  const annotations: Record<string, string> = { ...metadata.annotations, [SYNC_WAVE_ANNOTATION]: String(objectSyncWave(obj.kind)) };
  const keep = retentionOptions(obj.kind);
  if (keep) annotations[SYNC_OPTIONS_ANNOTATION] = [annotations[SYNC_OPTIONS_ANNOTATION], keep].filter(Boolean).join(',');
  return { ...obj, metadata: { ...metadata, annotations } };
}

/**
 * What Argo CD may never delete (docs/gitops.md, "What Argo CD never deletes"). Storage (MyDrive and persistent Instances'
 * PVCs, persistent VMs, which own their DataVolume) is neither pruned nor deleted with its
 * Application. Namespaces survive their Application's deletion: deleting a namespace deletes
 * every object in it, whichever Application holds them, Delete=false or not.
 */
export function retentionOptions(kind: string): string | undefined {
  switch (kind) {
    case 'PersistentVolumeClaim':
    case 'VirtualMachine':
    case 'DataVolume':
      return 'Prune=false,Delete=false';
    case 'Namespace':
      return 'Delete=false';
    default:
      return undefined;
  }
}

/** The keys a Secret holds, without their values. */
function secretKeys(secret: KubeObject): string[] {
  const data = (secret.data ?? {}) as Record<string, string>;
  const stringData = (secret.stringData ?? {}) as Record<string, string>;
  return [...new Set([...Object.keys(data), ...Object.keys(stringData)])].sort();
}

/**
 * A Secret as a reference the cluster resolves (docs/architecture.md, "Secrets"): an ExternalSecret reading
 * `<namespace>/<name>` from the configured store, a SealedSecret to fill with kubeseal, or nothing
 * (the Secret is expected to exist; SECRETS.md lists it).
 */
export function secretReference(secret: KubeObject, config: ComposerConfig): KubeObject | undefined {
  const { name, namespace, labels, annotations } = secret.metadata;
  const keys = secretKeys(secret);
  const templateMeta = { labels, annotations };
  switch (config.gitopsSecretMode) {
    case 'existing':
      return undefined;
    case 'external-secret':
      return {
        apiVersion: 'external-secrets.io/v1beta1',
        kind: 'ExternalSecret',
        metadata: { name, namespace, labels, annotations },
        spec: {
          refreshInterval: '1h',
          secretStoreRef: { kind: 'ClusterSecretStore', name: config.gitopsSecretStore },
          target: { name, creationPolicy: 'Owner', template: { type: (secret.type as string) ?? 'Opaque', metadata: templateMeta } },
          data: keys.map((key) => ({ secretKey: key, remoteRef: { key: `${namespace}/${name}`, property: key } })),
        },
      };
    case 'sealed-secret':
      return {
        apiVersion: 'bitnami.com/v1alpha1',
        kind: 'SealedSecret',
        metadata: { name, namespace, labels, annotations },
        spec: {
          encryptedData: Object.fromEntries(keys.map((k) => [k, `SEAL-ME: kubeseal --raw --namespace ${namespace} --name ${name} (key ${k})`])),
          template: { type: (secret.type as string) ?? 'Opaque', metadata: { name, namespace, ...templateMeta } },
        },
      };
  }
}

function resourceKey(apiVersion: string, kind: string, namespace: string | undefined): string {
  const slash = apiVersion.lastIndexOf('/');
  return `${slash < 0 ? '' : apiVersion.slice(0, slash)}\t${kind}\t${namespace ?? ''}`;
}

/**
 * Namespace families CrownLabs names (src/model/naming.ts): a namespace of one is permitted by the
 * family's pattern, so a new tenant or workspace needs no change of the hand-applied project.
 */
const NAMESPACE_FAMILIES = [tenantNamespaceName('*'), sandboxNamespaceName('*'), workspaceNamespaceName('*')];

/**
 * What the AppProject permits, derived from what the tree deploys: the kinds of its objects and of
 * the child Applications, the namespaces they are in (a family's pattern for CrownLabs-named ones,
 * else the exact name), and the Applications' own destination namespaces.
 */
export function projectScope(apps: readonly Pick<AppOutput<unknown>, 'parts' | 'namespace'>[], argocdNamespace: string): ProjectScope {
  const resources = new Set<string>([resourceKey('argoproj.io/v1alpha1', 'Application', argocdNamespace)]);
  const namespaces = new Set<string>([argocdNamespace]);
  for (const app of apps) {
    namespaces.add(app.namespace);
    for (const part of app.parts) for (const r of part.resources) resources.add(r);
  }
  return scopeOf(resources, namespaces);
}

/** The same for objects Argo CD syncs into `destination` (the platform install's Application). */
export function objectsScope(objects: readonly KubeObject[], destination: string): ProjectScope {
  return scopeOf(new Set(objects.map((o) => resourceKey(o.apiVersion, o.kind, o.metadata.namespace))), new Set([destination]));
}

export interface ProjectScope {
  namespaces: string[];
  namespacedKinds: GroupKind[];
  clusterKinds: GroupKind[];
}

function scopeOf(resources: ReadonlySet<string>, namespaces: Set<string>): ProjectScope {
  const namespaced = new Set<string>();
  const cluster = new Set<string>();
  for (const r of resources) {
    const [group, kind, namespace] = r.split('\t');
    if (namespace) {
      namespaced.add(`${group}\t${kind}`);
      namespaces.add(namespace);
    } else cluster.add(`${group}\t${kind}`);
  }
  const patterns = new Set<string>();
  for (const ns of namespaces) patterns.add(NAMESPACE_FAMILIES.find((f) => ns.startsWith(f.slice(0, -1)) && ns.length >= f.length) ?? ns);
  const kinds = (set: Set<string>) =>
    [...set].sort().map((k) => {
      const [group, kind] = k.split('\t');
      return { group, kind };
    });
  return { namespaces: [...patterns].sort(), namespacedKinds: kinds(namespaced), clusterKinds: kinds(cluster) };
}

function kustomization(files: readonly string[]): string {
  return objectToYaml({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...files].sort() });
}

function renderChart(build: (app: App) => Chart): KubeObject[] {
  return chartObjects(build(new App())) as KubeObject[];
}

interface AppOutput<C> {
  folder: string;
  namespace: string;
  syncWave: number;
  /** The files of the sets it was built from (identity: a re-rendered set has new files). */
  parts: SetFiles<string | C>[];
  entries: [path: string, content: string | C][];
  appFile: string;
  expected: string[];
}

function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface SetFiles<C = string> {
  files: [name: string, content: C][];
  /** What the AppProject must permit for these files: `group\tkind\tnamespace` (namespace empty: cluster-scoped), unique. */
  resources: string[];
  /** SECRETS.md rows (namespace, name, keys) of the Secrets left out; the Application is added later. */
  expectedSecrets: string[];
}

/**
 * Application files rendered by an earlier run, by `applicationKey` (the render cache keeps them):
 * an Application's object depends only on that key, the configuration and the code.
 */
export interface ApplicationStore {
  get(key: string): [file: string, yaml: string] | undefined;
  set(key: string, files: [file: string, yaml: string]): void;
}

/**
 * Routes without Ingresses (exposition "gateway") replace each Ingress: Argo CD then prunes only
 * once the rest is Healthy, the routes Accepted among it (docs/behaviour.md §17).
 */
function pruneLast(config: ComposerConfig): boolean {
  const e = exposure(config.exposition);
  return e.httpRoute && !e.ingress;
}

/**
 * Builds the gitops tree from rendered sets. Pure: same sets and config, same bytes. It remembers
 * what it wrote per rendered set and per Application, so watch mode re-emits only what changed.
 * `C`: what a primed set's file may hold instead of its text (the render cache's stand-in for a
 * file it has only the digest of); it is passed through to the tree as it is.
 */
export class GitopsTreeBuilder<C = string> {
  // Keyed by the set's unit, which stays the same object while its set is not re-rendered.
  private readonly perSet = new WeakMap<object, SetFiles<string | C>>();
  private readonly appYaml = new Map<string, [string, string]>();
  // What each Application wrote last time, reused while it holds the same sets' files: a watch
  // update rebuilds only the Applications whose sets were re-rendered.
  private apps = new Map<string, AppOutput<C>>();
  private tail?: { apps: AppOutput<C>[]; files: [string, string][] };

  constructor(
    private readonly config: ComposerConfig,
    private readonly store?: ApplicationStore,
  ) {}

  /**
   * The tree of rendered sets. A set whose files are known already (its unit rendered or primed
   * before) is not read again: its objects may have been released (LabSession.releaseObjects).
   */
  files(sets: readonly RenderedSet[]): Map<string, string | C> {
    return this.filesOf(
      sets.map((set) => {
        const sf = this.setFilesOf(set);
        // Each object is a file or a Secret left out (renderedFilesOf): their count is the set's.
        return { unit: set.unit, objectCount: sf.files.length + sf.expectedSecrets.length };
      }),
    );
  }

  /**
   * Renders each unit and keeps only its files, so the objects of one set at a time are in memory
   * (a full render without watch mode: peak memory stays that of the tree's text). `onRendered`
   * sees each set's objects first (the pre-write checks).
   */
  render(units: readonly RenderUnit[], onProgress?: (done: number, total: number) => void, onRendered?: (set: RenderedSet) => void): Map<string, string | C> {
    const sets = units.map((unit, i) => {
      const objects = renderUnit(unit);
      onRendered?.({ unit, objects });
      this.setFilesOf({ unit, objects });
      onProgress?.(i + 1, units.length);
      return { unit, objectCount: objects.length };
    });
    return this.filesOf(sets);
  }

  /** The tree of sets whose files are known already (primed, rendered, or given to files()). */
  filesOf(sets: readonly GitopsSet[]): Map<string, string | C> {
    const files = new Map<string, string | C>();
    const outputs: AppOutput<C>[] = [];
    const next = new Map<string, AppOutput<C>>();
    const apps = groupApplications(sets, this.config.gitopsMaxObjectsPerApp);
    this.renderApplications(apps);
    for (const app of apps) {
      const parts = app.sets.map((set) => this.setFiles(set));
      let out = this.apps.get(app.name);
      if (!out || out.folder !== app.folder || out.namespace !== app.namespace || out.syncWave !== app.syncWave || !sameItems(out.parts, parts)) out = this.appOutput(app, parts);
      next.set(app.name, out);
      outputs.push(out);
      for (const [path, content] of out.entries) files.set(path, content);
    }
    this.apps = next;
    if (!this.tail || !sameItems(this.tail.apps, outputs)) this.tail = { apps: outputs, files: this.treeTail(outputs) };
    for (const [path, content] of this.tail.files) files.set(path, content);
    return files;
  }

  /** An Application's files: its sets' objects, its kustomization, and the Application itself. */
  private appOutput(app: GitopsApp, parts: SetFiles<string | C>[]): AppOutput<C> {
    const entries: [string, string | C][] = [];
    const names: string[] = [];
    for (const part of parts) {
      for (const [name, content] of part.files) {
        entries.push([`${app.folder}/${name}`, content]);
        names.push(name);
      }
    }
    entries.push([`${app.folder}/kustomization.yaml`, kustomization(names)]);
    const [appFile, yaml] = this.appYaml.get(this.applicationKey(app))!;
    entries.push([`apps/${appFile}`, yaml]);
    const expected = parts.flatMap((part) => part.expectedSecrets.map((row) => `${row} ${app.name} |`));
    return { folder: app.folder, namespace: app.namespace, syncWave: app.syncWave, parts, entries, appFile, expected };
  }

  /** The files after the Applications': the apps kustomization, the root, SECRETS.md. */
  private treeTail(apps: readonly AppOutput<C>[]): [string, string][] {
    const config = this.config;
    const base = config.gitopsPath.replace(/\/+$/, '');
    const out: [string, string][] = [['apps/kustomization.yaml', kustomization(apps.map((a) => a.appFile))]];
    const rootObjects = renderChart(
      (a) =>
        new GitopsRootChart(a, 'root', {
          argocdNamespace: config.argocdNamespace,
          project: config.argocdProject,
          repoUrl: config.gitopsRepoUrl,
          revision: config.gitopsRevision,
          appsPath: `${base}/apps`,
          ...projectScope(apps, config.argocdNamespace),
        }),
    );
    out.push(['root/kustomization.yaml', kustomization(rootObjects.map((o) => objectFileName(o)))]);
    for (const o of rootObjects) out.push([`root/${objectFileName(o)}`, objectToYaml(o)]);
    out.push(['SECRETS.md', secretsReadme(config, apps.flatMap((a) => a.expected))]);
    return out;
  }

  /** The files of one rendered set (render workers compute them this way), or what was primed for its unit. */
  setFilesOf(set: RenderedSet): SetFiles<string | C> {
    return this.perSet.get(set.unit) ?? this.renderedFilesOf(set);
  }

  /** The files of one rendered set from its objects, replacing whatever its unit had. */
  renderedFilesOf(set: RenderedSet): SetFiles {
    const sf: SetFiles = { files: [], resources: [], expectedSecrets: [] };
    const resources = new Set<string>();
    for (const obj of set.objects) {
      const out = gitopsObject(obj, this.config); // copies what it changes: obj stays as rendered
      if (out) {
        sf.files.push([objectFileName(out), objectToYaml(out)]);
        resources.add(resourceKey(out.apiVersion, out.kind, out.metadata.namespace));
      } else sf.expectedSecrets.push(`| ${obj.metadata.namespace ?? ''} | ${obj.metadata.name} | ${secretKeys(obj).join(', ')} |`);
    }
    sf.resources = [...resources].sort();
    this.perSet.set(set.unit, sf);
    return sf;
  }

  /** Uses files computed elsewhere (a render worker) for a set's unit. */
  prime(unit: object, files: SetFiles<string | C>): void {
    this.perSet.set(unit, files);
  }

  private setFiles(set: GitopsSet): SetFiles<string | C> {
    const sf = this.perSet.get(set.unit);
    if (!sf) throw new Error(`no objects or files for resource set ${set.unit.id}`);
    return sf;
  }

  private applicationKey(app: GitopsApp): string {
    return `${app.name}\0${app.folder}\0${app.namespace}\0${app.syncWave}${pruneLast(this.config) ? '\0prune-last' : ''}`;
  }

  /**
   * Renders the Applications not rendered before, all in one chart: one App per Application cost
   * more than the rest of the tree's layout at 2,000 Applications.
   */
  private renderApplications(apps: readonly GitopsApp[]): void {
    const missing = apps.filter((app) => {
      const key = this.applicationKey(app);
      if (this.appYaml.has(key)) return false;
      const stored = this.store?.get(key);
      if (stored) this.appYaml.set(key, stored);
      return !stored;
    });
    if (missing.length === 0) return;
    const c = this.config;
    const base = c.gitopsPath.replace(/\/+$/, '');
    const props = missing.map((app) => ({ name: app.name, path: `${base}/${app.folder}`, namespace: app.namespace, syncWave: app.syncWave, ...(pruneLast(c) ? { pruneLast: true } : {}) }));
    // In charts of APPS_PER_CHART: one chart per Application costs an App each, one chart of all
    // 2,000 a cold 5k tree holds all their constructs at once.
    for (let start = 0; start < missing.length; start += APPS_PER_CHART) {
      const chunk = props.slice(start, start + APPS_PER_CHART);
      const objects = renderChart((a) => new GitopsAppsChart(a, 'apps', { apps: chunk, argocdNamespace: c.argocdNamespace, project: c.argocdProject, repoUrl: c.gitopsRepoUrl, revision: c.gitopsRevision }));
      const byName = new Map(objects.map((o) => [o.metadata.name, o]));
      for (const app of missing.slice(start, start + APPS_PER_CHART)) {
        const obj = byName.get(app.name)!;
        const files: [string, string] = [objectFileName(obj), objectToYaml(obj)];
        this.appYaml.set(this.applicationKey(app), files);
        this.store?.set(this.applicationKey(app), files);
      }
    }
  }
}

/** The whole gitops tree as relative path → content. */
export function gitopsFiles(sets: readonly RenderedSet[], config: ComposerConfig): Map<string, string> {
  return new GitopsTreeBuilder(config).files(sets);
}

function secretsReadme(config: ComposerConfig, expected: readonly string[]): string {
  const mode = config.gitopsSecretMode;
  const lines = [
    '# Secrets of this tree',
    '',
    'Generated by `crownlabs gitops`; do not edit. No Secret value is ever written into this tree.',
    '',
    `Secret mode: \`${mode}\`.`,
    '',
  ];
  if (mode === 'existing') {
    lines.push('These Secrets are not in the tree: create them in the cluster (by hand, with a secret manager, or from the values `crownlabs synth` renders).', '', '| namespace | name | keys | application |', '|---|---|---|---|', ...[...expected].sort());
  } else if (mode === 'external-secret') {
    lines.push(`Each Secret is an ExternalSecret reading \`<namespace>/<name>\` (one property per key) from the ClusterSecretStore \`${config.gitopsSecretStore}\`.`);
  } else {
    lines.push('Each Secret is a SealedSecret whose `encryptedData` values are placeholders: seal the real values with `kubeseal --raw` for the namespace and name given in each placeholder, and commit the result. Later `crownlabs gitops` runs keep the sealed values.');
  }
  return `${lines.join('\n')}\n`;
}
