/**
 * The controller's informers and the Inventory built from them. Input objects (CrownLabs kinds,
 * Namespaces, `mydrive-info` Secrets) go through `checkObject`, the same validation and defaulting
 * as files, before they enter the Inventory. Rendered children are watched by our managed-by label
 * and indexed by their parent-id label; only those some parent can render are kept (child-guard.ts),
 * and Secrets without their data (secret-digest.ts): docs/behaviour.md §0.8.
 */
import { Inventory } from '../inputs/inventory.ts';
import { DEFAULT_API_LEVEL, kindExistsAt, type ApiLevel } from '../inputs/api-level.ts';
import { DependencyIndex } from '../compose/dependency-index.ts';
import { checkObject, type SourcedObject } from '../inputs/parse.ts';
import type { Problem } from '../inputs/problems.ts';
import { INPUT_KINDS, type InputKind, type InputObject } from '../inputs/types.ts';
import { COMPOSER, LABEL } from '../model/labels.ts';
import { MYDRIVE_INFO_SECRET } from '../model/mydrive.ts';
import { defaultConfig } from '../config/config.ts';
import { Informer, type CachedObject, type InformerOptions } from '../kube/informer.ts';
import type { KubeClient } from '../kube/client.ts';
import { childKinds } from './child-kinds.ts';
import { keptAsChild, type ChildGuardConfig } from './child-guard.ts';
import { secretDigestProjection } from './secret-digest.ts';
import { HeadlessPods } from './headless-pods.ts';

/**
 * List page of the Secret informers: a page is read whole, and a Secret may hold up to 1 MiB, so
 * a page of them stays near 8 MiB whatever tenants store.
 */
export const SECRET_PAGE_SIZE = 8;
/** Longest `mydrive-info` value kept (a server name, a path): anything longer is not a share. */
export const MYDRIVE_INFO_VALUE_MAX = 4096;

export interface CachesOptions {
  onError?: (source: string, err: Error) => void;
  onList?: (kind: string, reason: string) => void;
  /** Objects the API server returns that fail validation. */
  onInvalid?: (obj: CachedObject, problems: Problem[]) => void;
  /**
   * What decides which watched objects can be children (the configuration's MyDrive namespace).
   * @default the configuration's default
   */
  childGuard?: ChildGuardConfig;
  /**
   * The API level of the cluster's CRDs (docs/behaviour.md §16.2): input objects are checked
   * against its schemas and the Inventory carries it.
   * @default DEFAULT_API_LEVEL
   */
  level?: ApiLevel;
}

export class Caches {
  readonly inventory: Inventory;
  /**
   * Parent key → the input keys its last reconcile looked up (compose's recorded dependencies,
   * and the lookups of a reconcile that stopped before composing): the fan-out of input changes.
   */
  readonly dependencies = new DependencyIndex();
  /** The Pods of headless Services, kept until their workload moves (e62be9e). */
  readonly headlessPods = new HeadlessPods();
  readonly tenants: Informer;
  readonly workspaces: Informer;
  readonly templates: Informer;
  readonly instances: Informer;
  readonly snapshots: Informer;
  /** At the levels that have the kind (src/inputs/api-level.ts); else none. */
  readonly sharedVolumes: Informer | undefined;
  readonly namespaces: Informer;
  readonly mydriveSecrets: Informer;
  readonly persistentVolumes: Informer;
  /** Rendered children by `apiVersion/kind` (Namespaces: the all-namespaces informer). */
  readonly children = new Map<string, Informer>();
  readonly all: Informer[] = [];
  /** Why each object that failed validation did (`kind/namespace/name` → problems), for its Event. */
  private readonly invalid = new Map<string, string>();

  constructor(
    readonly client: KubeClient,
    private readonly options: CachesOptions = {},
  ) {
    this.inventory = new Inventory(options.level ?? DEFAULT_API_LEVEL);
    const make = (o: Omit<InformerOptions, 'onError' | 'onList'>) => {
      const inf = new Informer(client, {
        ...o,
        onError: (e) => options.onError?.(o.kind, e),
        onList: (reason) => options.onList?.(o.kind, reason),
      });
      this.all.push(inf);
      return inf;
    };
    const input = (kind: InputKind, extra: Partial<InformerOptions> = {}) => {
      const inf = make({ apiVersion: INPUT_KINDS[kind].apiVersion, kind, ...extra });
      inf.on((type, obj) => this.toInventory(type, obj));
      return inf;
    };
    this.tenants = input('Tenant');
    this.workspaces = input('Workspace');
    this.templates = input('Template');
    this.instances = input('Instance');
    this.snapshots = input('InstanceSnapshot');
    // Optional: a lab at that level without the CRD installed has no SharedVolumes, and still syncs.
    this.sharedVolumes = kindExistsAt('SharedVolume', this.inventory.level) ? input('SharedVolume', { optional: true }) : undefined;
    this.namespaces = input('Namespace');
    this.mydriveSecrets = input('Secret', { fieldSelector: `metadata.name=${MYDRIVE_INFO_SECRET}`, transform: myDriveInfoProjection, pageSize: SECRET_PAGE_SIZE });
    this.persistentVolumes = make({ apiVersion: 'v1', kind: 'PersistentVolume', transform: persistentVolumeProjection });
    const managed = `${COMPOSER.managedByKey}=${COMPOSER.managedByValue}`;
    const guard = options.childGuard ?? { mydrivePvcsNamespace: defaultConfig().mydrivePvcsNamespace };
    const accept = (o: CachedObject) => keptAsChild(o, guard);
    for (const { apiVersion, kind, optional } of childKinds()) {
      // VMIs: ours and those KubeVirt creates from a persistent VM (docs/behaviour.md §7.1: mapped by the
      // `crownlabs.polito.it/instance` label, which both carry).
      const selector = kind === 'VirtualMachineInstance' ? LABEL.instance : managed;
      const secret = kind === 'Secret' ? { transform: secretDigestProjection, pageSize: SECRET_PAGE_SIZE } : {};
      const inf = kind === 'Namespace' ? this.namespaces : make({ apiVersion, kind, labelSelector: selector, accept, ...secret, ...(optional ? { optional } : {}) });
      this.children.set(`${apiVersion}/${kind}`, inf);
    }
  }

  start(): void {
    for (const inf of this.all) inf.start();
  }

  stop(): void {
    for (const inf of this.all) inf.stop();
  }

  async synced(): Promise<void> {
    await Promise.all(this.all.map((i) => i.synced));
  }

  get hasSynced(): boolean {
    return this.all.every((i) => i.hasSynced);
  }

  child(apiVersion: string, kind: string): Informer | undefined {
    return this.children.get(`${apiVersion}/${kind}`);
  }

  /** The informer holding objects of a kind we write (children first: the `v1/Secret` one is ours). */
  informerOf(apiVersion: string, kind: string): Informer | undefined {
    return this.child(apiVersion, kind) ?? this.all.find((i) => i.options.apiVersion === apiVersion && i.options.kind === kind && !i.options.fieldSelector);
  }

  /** The server's answer to a write of ours, until the watch brings it (`Informer.noteWritten`). */
  noteWritten(answer: unknown): void {
    const o = answer as CachedObject | undefined;
    if (o?.apiVersion && o.kind && o.metadata?.name) this.informerOf(o.apiVersion, o.kind)?.noteWritten(o);
  }

  /** A write of ours to `obj` (`Informer.write`: its echo is known as ours even before the answer). */
  write<T>(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }, send: () => Promise<T>): Promise<T> {
    const inf = this.informerOf(obj.apiVersion, obj.kind);
    return inf ? inf.write(obj.metadata.namespace, obj.metadata.name, send) : send();
  }

  /** The informer of a parent kind's objects (a resource set's owner); none for other kinds. */
  parentInformer(kind: string): Informer | undefined {
    switch (kind) {
      case 'Tenant':
        return this.tenants;
      case 'Workspace':
        return this.workspaces;
      case 'Instance':
        return this.instances;
      case 'InstanceSnapshot':
        return this.snapshots;
      case 'SharedVolume':
        return this.sharedVolumes;
      default:
        return undefined;
    }
  }

  /** The cached parent of a work-queue key (`Kind/name`, `Kind/namespace/name`). */
  parentOf(key: string): CachedObject | undefined {
    const parts = key.split('/');
    const [kind, a, b] = parts;
    const inf = this.parentInformer(kind);
    const namespaced = INPUT_KINDS[kind as InputKind]?.namespaced;
    if (parts.length === 2 && namespaced === false) return inf?.get(undefined, a);
    if (parts.length === 3 && namespaced === true) return inf?.get(a, b);
    return undefined;
  }

  /** The live object of a rendered object, from the cache of its kind. */
  liveOf(obj: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } }): CachedObject | undefined {
    return this.child(obj.apiVersion, obj.kind)?.get(obj.metadata.namespace, obj.metadata.name);
  }

  private toInventory(type: 'add' | 'update' | 'delete', obj: CachedObject): void {
    const id = invalidKey(obj);
    if (type === 'delete') {
      this.invalid.delete(id);
      this.inventory.remove(obj as unknown as InputObject);
      return;
    }
    const problems: Problem[] = [];
    const out: SourcedObject[] = [];
    const source = { file: `cluster:${obj.kind}/${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`, document: 1 };
    // Validation applies the CRD defaults in place: the cache keeps the object as the server sent it.
    checkObject(cloneJson(obj), source, problems, out, '', this.inventory.level);
    if (out.length === 1) {
      this.invalid.delete(id);
      this.inventory.upsert(out[0].object, source);
    } else {
      this.invalid.set(id, problems.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join('; '));
      this.inventory.remove(obj as unknown as InputObject);
      this.options.onInvalid?.(obj, problems);
    }
  }

  /** What made an object fail validation (empty when it did not, or is not cached). */
  whyInvalid(obj: CachedObject): string {
    return this.invalid.get(invalidKey(obj)) ?? '';
  }
}

function invalidKey(obj: CachedObject): string {
  return `${obj.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

/**
 * A deep copy of JSON data (what the API server sends) whose objects and lists are new but whose
 * strings are shared: unlike structuredClone, the Inventory's copy of an input object does not
 * duplicate its strings (an Instance's frozen Template spec is most of it).
 */
export function cloneJson<T>(v: T): T {
  if (Array.isArray(v)) return v.map(cloneJson) as T;
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) out[k] = cloneJson((v as Record<string, unknown>)[k]);
  return out as T;
}

/**
 * What the controller reads of a PersistentVolume (the MyDrive share of a bound PVC): its
 * `claimRef` and CSI `volumeAttributes`. The informer lists every PV of the cluster; the rest of
 * each (node affinity, mount options, annotations, status) is not kept.
 */
export function persistentVolumeProjection(pv: CachedObject): CachedObject {
  const spec = (pv.spec ?? {}) as { claimRef?: { namespace?: string; name?: string }; csi?: { volumeAttributes?: Record<string, string> } };
  const { name, namespace, uid, resourceVersion } = pv.metadata;
  const kept: Record<string, unknown> = {};
  if (spec.claimRef) kept.claimRef = { namespace: spec.claimRef.namespace, name: spec.claimRef.name };
  if (spec.csi?.volumeAttributes) kept.csi = { volumeAttributes: spec.csi.volumeAttributes };
  return { apiVersion: pv.apiVersion, kind: pv.kind, metadata: { name, namespace, uid, resourceVersion }, spec: kept };
}

/**
 * What the controller reads of a `mydrive-info` Secret: its `server-name` and `path` (nfsShareFromSecret).
 * The informer lists that name in every namespace, sandboxes included: other keys, and values
 * too long to be a server name or a path, are not kept.
 */
export function myDriveInfoProjection(secret: CachedObject): CachedObject {
  const data = (secret.data ?? {}) as Record<string, unknown>;
  const kept: Record<string, string> = {};
  for (const k of ['server-name', 'path']) {
    const v = data[k];
    if (typeof v === 'string' && v.length <= MYDRIVE_INFO_VALUE_MAX) kept[k] = v;
  }
  const { data: _data, stringData: _stringData, ...rest } = secret;
  return { ...rest, data: kept };
}
