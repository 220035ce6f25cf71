// Helpers for integration tests against the real test cluster started by global-setup.ts
// (scripts/test-cluster: etcd + kube-apiserver + kube-controller-manager on 127.0.0.1).
//
// Generic object requests go through a tiny REST client (`rest()`) rather than
// KubernetesObjectApi: the latter re-serializes built-in kinds through its generated models,
// which drops fields it does not model (e.g. `x-kubernetes-*` keys inside a CRD schema) — we
// want the API server to see exactly what a construct rendered.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { inject } from 'vitest';

const execFileAsync = promisify(execFile);

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TEST_CLUSTER_SCRIPT = path.join(REPO_ROOT, 'scripts/test-cluster');

/** A Kubernetes object as sent on the wire (apiVersion/kind/metadata.name are required). */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}

/** A non-2xx answer of the API server. `body` is usually a metav1.Status. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly body: any,
    readonly method: string,
    readonly url: string,
  ) {
    super(`${method} ${url} -> ${code}: ${body?.message ?? JSON.stringify(body)}`);
    this.name = 'ApiError';
  }
}

function injected(key: 'testClusterKubeconfig' | 'testClusterDir'): string | undefined {
  try {
    return inject(key);
  } catch {
    return undefined; // not inside a vitest worker
  }
}

/** Path of the admin (system:masters) kubeconfig of the test cluster. */
export function adminKubeConfigPath(): string {
  const p = injected('testClusterKubeconfig') ?? process.env.TEST_CLUSTER_KUBECONFIG ?? process.env.KUBECONFIG;
  if (!p) throw new Error('no test cluster: run through `vitest --project integration` (global-setup.ts) or set TEST_CLUSTER_KUBECONFIG');
  return p;
}

/** State dir of the test cluster (holds the CA used to sign per-user client certificates). */
export function testClusterDir(): string | undefined {
  return injected('testClusterDir') ?? process.env.TEST_CLUSTER_DIR;
}

export function loadKubeConfig(file: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

const adminConfigs = new Map<string, KubeConfig>();

/** KubeConfig of the cluster admin (group system:masters). Memoized per kubeconfig path. */
export function adminKubeConfig(): KubeConfig {
  const file = adminKubeConfigPath();
  let kc = adminConfigs.get(file);
  if (!kc) adminConfigs.set(file, (kc = loadKubeConfig(file)));
  return kc;
}

/**
 * KubeConfig authenticating as `user` in `groups`, with a client certificate signed by the test
 * cluster's CA (`scripts/test-cluster kubeconfig USER GROUP...`). No RBAC bindings are created.
 */
export async function kubeConfigFor(user: string, groups: string[] = []): Promise<KubeConfig> {
  const dir = testClusterDir();
  const { stdout } = await execFileAsync(TEST_CLUSTER_SCRIPT, ['kubeconfig', user, ...groups], {
    env: { ...process.env, ...(dir ? { TEST_CLUSTER_DIR: dir } : {}) },
  });
  return loadKubeConfig(stdout.trim().split('\n').pop()!);
}

// ---------------------------------------------------------------------------------------------
// Minimal REST client
// ---------------------------------------------------------------------------------------------

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
}

export interface RestClient {
  readonly kubeConfig: KubeConfig;
  request<T = any>(method: string, urlPath: string, opts?: RequestOptions): Promise<T>;
  /**
   * REST path of an object (or of its collection when `name` is omitted), via discovery.
   * For a namespaced kind, `namespace` undefined means `default`, null means all namespaces.
   */
  resourcePath(apiVersion: string, kind: string, namespace?: string | null, name?: string): Promise<string>;
}

interface ApiResource { name: string; kind: string; namespaced: boolean }

const clients = new WeakMap<KubeConfig, RestClient>();

/** A REST client for `kc` (default: admin). Discovery results are cached per client. */
export function rest(kc: KubeConfig = adminKubeConfig()): RestClient {
  const cached = clients.get(kc);
  if (cached) return cached;
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('kubeconfig has no current cluster');
  const discovery = new Map<string, Promise<ApiResource[]>>();

  async function request<T>(method: string, urlPath: string, opts: RequestOptions = {}): Promise<T> {
    const url = new URL(urlPath, server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const reqOpts: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
    await kc.applyToHTTPSOptions(reqOpts);
    let payload: string | undefined;
    if (opts.body !== undefined) {
      payload = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      reqOpts.headers = { ...reqOpts.headers, 'Content-Type': opts.contentType ?? 'application/json' };
    }
    return new Promise<T>((resolve, reject) => {
      const req = https.request(url, reqOpts, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: any = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* keep text */
          }
          const code = res.statusCode ?? 0;
          if (code >= 200 && code < 300) resolve(parsed as T);
          else reject(new ApiError(code, parsed, method, url.pathname + url.search));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  async function resources(apiVersion: string): Promise<ApiResource[]> {
    let p = discovery.get(apiVersion);
    if (!p) {
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      p = request<{ resources: ApiResource[] }>('GET', base).then((l) => l.resources);
      p.catch(() => discovery.delete(apiVersion));
      discovery.set(apiVersion, p);
    }
    return p;
  }

  async function resourcePath(apiVersion: string, kind: string, namespace?: string | null, name?: string): Promise<string> {
    let res = (await resources(apiVersion)).find((r) => r.kind === kind && !r.name.includes('/'));
    if (!res) {
      discovery.delete(apiVersion); // maybe a CRD that was just established
      res = (await resources(apiVersion)).find((r) => r.kind === kind && !r.name.includes('/'));
    }
    if (!res) throw new Error(`kind ${kind} not served in ${apiVersion}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const ns = res.namespaced && namespace !== null ? `/namespaces/${encodeURIComponent(namespace ?? 'default')}` : '';
    return `${base}${ns}/${res.name}${name ? `/${encodeURIComponent(name)}` : ''}`;
  }

  const client: RestClient = { kubeConfig: kc, request, resourcePath };
  clients.set(kc, client);
  return client;
}

// ---------------------------------------------------------------------------------------------
// Object helpers
// ---------------------------------------------------------------------------------------------

export interface ApplyOptions {
  /** Server-side dry run (`dryRun=All`): full validation and admission, nothing persisted. */
  dryRun?: boolean;
  /** Field manager (default `crownlabs-composer-test`). */
  fieldManager?: string;
  /** Take over conflicting fields (default true). */
  force?: boolean;
  /** Credentials to use (default admin). */
  kubeConfig?: KubeConfig;
}

/**
 * Server-side apply each object in order (PATCH, `application/apply-patch+yaml`; the JSON body is
 * valid YAML). Returns the objects as the API server answered. Rejects with ApiError (e.g. 422 for
 * a schema violation) on the first failure.
 */
export async function serverSideApply<T extends KubeObject>(objects: T | T[], opts: ApplyOptions = {}): Promise<T[]> {
  const c = rest(opts.kubeConfig);
  const out: T[] = [];
  for (const obj of Array.isArray(objects) ? objects : [objects]) {
    const p = await c.resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace, obj.metadata.name);
    out.push(
      await c.request<T>('PATCH', p, {
        body: obj,
        contentType: 'application/apply-patch+yaml',
        query: {
          fieldManager: opts.fieldManager ?? 'crownlabs-composer-test',
          force: opts.force ?? true,
          dryRun: opts.dryRun ? 'All' : undefined,
        },
      }),
    );
  }
  return out;
}

type Ref = Pick<KubeObject, 'apiVersion' | 'kind'> & { metadata: { name: string; namespace?: string } };

/**
 * Create objects with `dryRun=All` (POST): full validation, defaulting and admission, nothing
 * persisted. Unlike server-side apply, a value of the wrong type or an unknown field is reported
 * as 422 Invalid (with `fieldValidation=Strict`, the default here) rather than 500.
 */
export async function dryRunCreate<T extends KubeObject>(
  objects: T | T[],
  opts: { kubeConfig?: KubeConfig; fieldValidation?: 'Strict' | 'Warn' | 'Ignore' } = {},
): Promise<T[]> {
  const c = rest(opts.kubeConfig);
  const out: T[] = [];
  for (const obj of Array.isArray(objects) ? objects : [objects]) {
    const p = await c.resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace);
    out.push(await c.request<T>('POST', p, { body: obj, query: { dryRun: 'All', fieldValidation: opts.fieldValidation ?? 'Strict' } }));
  }
  return out;
}

/**
 * Whether an error is the API server rejecting an object's content: 422 Invalid (schema, enum,
 * CEL, required fields, ...), 400 BadRequest (strict field validation), or the 500 that
 * server-side apply still returns when the patch cannot be converted to the schema's types — a
 * value of the wrong type or a field not declared in the schema ("failed to create typed patch
 * object"; kubernetes/kubernetes#139253).
 */
export function isSchemaRejection(e: unknown): e is ApiError {
  if (!(e instanceof ApiError)) return false;
  if (e.code === 422 || e.code === 400) return true;
  // Server-side apply answers 500 for type and quantity errors (kubernetes/kubernetes#139253).
  return e.code === 500 && /failed to create typed patch object|failed to convert new object/.test(String(e.body?.message));
}

/** GET an object; undefined when it does not exist. */
export async function getObject<T = KubeObject>(ref: Ref, kc?: KubeConfig): Promise<T | undefined> {
  const c = rest(kc);
  try {
    return await c.request<T>('GET', await c.resourcePath(ref.apiVersion, ref.kind, ref.metadata.namespace, ref.metadata.name));
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return undefined;
    throw e;
  }
}

/** POST an object (plain create). */
export async function createObject<T extends KubeObject>(obj: T, kc?: KubeConfig): Promise<T> {
  const c = rest(kc);
  return c.request<T>('POST', await c.resourcePath(obj.apiVersion, obj.kind, obj.metadata.namespace), { body: obj });
}

/** DELETE an object; false if it was already gone. */
/**
 * Deletes the cluster-scoped objects a test applied of a rendered install (ClusterRoles, bindings,
 * webhook configurations), whose names other files render too. CRDs stay (every file shares them),
 * and so do namespaces: a later apply into a terminating one would fail.
 */
export async function deleteInstall(objects: KubeObject[]): Promise<void> {
  for (const o of objects) if (!o.metadata.namespace && o.kind !== 'CustomResourceDefinition' && o.kind !== 'Namespace') await deleteObject(o);
}

export async function deleteObject(
  ref: Ref,
  opts: { propagationPolicy?: 'Background' | 'Foreground' | 'Orphan'; kubeConfig?: KubeConfig } = {},
): Promise<boolean> {
  const c = rest(opts.kubeConfig);
  try {
    await c.request('DELETE', await c.resourcePath(ref.apiVersion, ref.kind, ref.metadata.namespace, ref.metadata.name), {
      body: opts.propagationPolicy ? { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: opts.propagationPolicy } : undefined,
    });
    return true;
  } catch (e) {
    if (e instanceof ApiError && e.code === 404) return false;
    throw e;
  }
}

/** Delete objects in reverse order (dependents before what they depend on), ignoring 404s. */
export async function deleteAll(objects: Ref[], opts: { wait?: boolean; kubeConfig?: KubeConfig } = {}): Promise<void> {
  for (const o of [...objects].reverse()) await deleteObject(o, { propagationPolicy: 'Background', kubeConfig: opts.kubeConfig });
  if (opts.wait) {
    await waitFor(async () => {
      for (const o of objects) if (await getObject(o, opts.kubeConfig)) return false;
      return true;
    }, { message: 'objects to be deleted' });
  }
}

/** List objects of a kind (in a namespace, or cluster-wide / all namespaces when omitted). */
export async function listObjects<T = KubeObject>(
  apiVersion: string,
  kind: string,
  opts: { namespace?: string; labelSelector?: string; kubeConfig?: KubeConfig } = {},
): Promise<T[]> {
  const c = rest(opts.kubeConfig);
  const p = await c.resourcePath(apiVersion, kind, opts.namespace ?? null);
  const list = await c.request<{ items: T[] }>('GET', p, { query: { labelSelector: opts.labelSelector } });
  return list.items;
}

/** Delete every object of a kind matching a label selector (in a namespace, or everywhere). */
export async function deleteAllOf(
  apiVersion: string,
  kind: string,
  opts: { namespace?: string; labelSelector?: string; kubeConfig?: KubeConfig } = {},
): Promise<number> {
  const items = await listObjects<KubeObject>(apiVersion, kind, opts);
  for (const o of items) await deleteObject({ apiVersion, kind, metadata: o.metadata }, { kubeConfig: opts.kubeConfig });
  return items.length;
}

/** A DNS-1123 name unique to this run: `${prefix}-<8 hex>`. */
export function uniqueName(prefix = 'test'): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

/** Create a fresh namespace; returns its name. Delete it with `deleteNamespace`. */
export async function createNamespace(prefix = 'it', labels: Record<string, string> = {}): Promise<string> {
  const name = uniqueName(prefix);
  await createObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
  return name;
}

export async function deleteNamespace(name: string): Promise<void> {
  await deleteObject({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/** The HTTP status of a failed request (or 200 when it succeeded). */
export async function statusOf(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    if (e instanceof ApiError) return e.code;
    throw e;
  }
}

/** The ApiError a request failed with; throws if it succeeded. */
export async function apiError(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected the request to fail, but it succeeded');
}

/**
 * Poll `fn` until it returns a value other than false/undefined/null without throwing; returns
 * that value. On timeout rejects with the last error (if any).
 */
export async function waitFor<T>(
  fn: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; message?: string } = {},
): Promise<Exclude<T, false | undefined | null>> {
  const timeout = opts.timeoutMs ?? 30_000;
  const interval = opts.intervalMs ?? 200;
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined && v !== null) return v as Exclude<T, false | undefined | null>;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline) {
      const what = opts.message ? ` for ${opts.message}` : '';
      throw new Error(`timed out after ${timeout}ms waiting${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
