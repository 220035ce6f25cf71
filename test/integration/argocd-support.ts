// Helpers of the Argo CD integration test: Argo CD started by scripts/argocd-test, a second test
// cluster for the apply-controller, a local git repository, and watches recording when objects
// were created.
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { loadKubeConfig, REPO_ROOT, rest, TEST_CLUSTER_SCRIPT, type KubeObject } from './cluster.ts';

const execFileAsync = promisify(execFile);
export const ARGOCD_SCRIPT = path.join(REPO_ROOT, 'scripts/argocd-test');

/** Runs a script with TEST_CLUSTER_DIR set; its stderr goes to ours. Returns the last stdout line. */
async function script(file: string, args: string[], clusterDir: string, timeoutMs = 900_000): Promise<string> {
  const child = execFileAsync(file, args, { env: { ...process.env, TEST_CLUSTER_DIR: clusterDir }, timeout: timeoutMs, maxBuffer: 16 << 20 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  return stdout.trim().split('\n').pop() ?? '';
}

export const argocd = (cmd: 'start' | 'stop', clusterDir: string) => script(ARGOCD_SCRIPT, [cmd], clusterDir);

/** Path of Argo CD's multi-call binary (built and cached by scripts/argocd-test on first use). */
export async function argocdBinary(): Promise<string> {
  const child = execFileAsync(ARGOCD_SCRIPT, ['build'], { timeout: 1_800_000, maxBuffer: 16 << 20 });
  child.child.stderr?.pipe(process.stderr);
  const { stdout } = await child;
  const line = stdout.split('\n').find((l) => l.startsWith('ARGOCD_BIN='));
  if (!line) throw new Error(`scripts/argocd-test build printed no ARGOCD_BIN: ${stdout}`);
  return line.slice('ARGOCD_BIN='.length);
}

/** A second test cluster (its own etcd and API server) in `dir`; returns its admin KubeConfig. */
export async function startPeerCluster(dir: string): Promise<KubeConfig> {
  return loadKubeConfig(await script(TEST_CLUSTER_SCRIPT, ['start'], dir));
}
/**
 * Adds kube-controller-manager to the peer cluster (its PV binder binds MyDrive PVCs to their PVs).
 * After installing the CRDs: its quota controller counts a CRD's objects (an Instance quota) only
 * for quotas it syncs after it discovered the CRD, and resyncs the others every 5 minutes.
 */
export const startPeerControllerManager = (dir: string) => script(TEST_CLUSTER_SCRIPT, ['start', '--with-controller-manager'], dir);
export const stopPeerCluster = (dir: string) => script(TEST_CLUSTER_SCRIPT, ['stop'], dir);

export async function git(repo: string, ...args: string[]): Promise<string> {
  const { stdout } = await execFileAsync('git', ['-C', repo, ...args], {
    env: { ...process.env, GIT_AUTHOR_NAME: 'test', GIT_AUTHOR_EMAIL: 'test@example.org', GIT_COMMITTER_NAME: 'test', GIT_COMMITTER_EMAIL: 'test@example.org' },
    maxBuffer: 256 << 20,
  });
  return stdout;
}

/** Commits everything in the repository; returns the new commit's SHA. */
export async function commitAll(repo: string, message: string): Promise<string> {
  await git(repo, 'add', '-A');
  await git(repo, 'commit', '-q', '-m', message);
  return (await git(repo, 'rev-parse', 'HEAD')).trim();
}

export interface TreeObject {
  file: string;
  object: KubeObject;
}

/** The objects of a gitops tree (every YAML file but the kustomizations), by relative path. */
export function treeObjects(dir: string): TreeObject[] {
  const out: TreeObject[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.yaml') && name !== 'kustomization.yaml') out.push({ file: path.relative(dir, p), object: parse(readFileSync(p, 'utf8')) as KubeObject });
    }
  };
  walk(dir);
  return out;
}

export const objectKey = (o: { kind: string; metadata: { namespace?: string; name: string } }) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Without Argo CD's own annotations: what the composition rendered. */
export function withoutArgoAnnotations(o: KubeObject): KubeObject {
  const annotations = Object.fromEntries(Object.entries((o.metadata.annotations ?? {}) as Record<string, string>).filter(([k]) => !k.startsWith('argocd.argoproj.io/')));
  return { ...o, metadata: { ...o.metadata, annotations } };
}

/** The live object reduced to the fields the rendered one has (same key order), for an exact comparison. */
export function pickRendered(rendered: unknown, live: unknown): unknown {
  if (Array.isArray(rendered)) return Array.isArray(live) ? rendered.map((r, i) => pickRendered(r, live[i])) : live;
  if (rendered && typeof rendered === 'object') {
    if (!live || typeof live !== 'object') return live;
    return Object.fromEntries(Object.keys(rendered).map((k) => [k, pickRendered((rendered as Record<string, unknown>)[k], (live as Record<string, unknown>)[k])]));
  }
  return live;
}

/** The first path where `live` differs from `rendered` on a rendered field. */
export function firstDifference(rendered: unknown, live: unknown, at = ''): string | undefined {
  if (Array.isArray(rendered)) {
    if (!Array.isArray(live) || live.length !== rendered.length) return `${at}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`;
    for (let i = 0; i < rendered.length; i++) {
      const d = firstDifference(rendered[i], live[i], `${at}/${i}`);
      if (d) return d;
    }
    return undefined;
  }
  if (rendered && typeof rendered === 'object') {
    for (const [k, v] of Object.entries(rendered)) {
      const d = firstDifference(v, (live as Record<string, unknown> | undefined)?.[k], `${at}/${k}`);
      if (d) return d;
    }
    return undefined;
  }
  return rendered === live ? undefined : `${at}: ${JSON.stringify(rendered)} != ${JSON.stringify(live)}`;
}

/**
 * Records, for every object of the given kinds created from now on, the resourceVersion of its
 * creation: with one etcd, resourceVersions of all kinds share one increasing revision counter,
 * so they order the creations across kinds (a test-only reading of an otherwise opaque value).
 */
export class CreationRecorder {
  readonly created = new Map<string, bigint>();
  private readonly aborts: AbortController[] = [];

  static async start(kc: KubeConfig, kinds: readonly { apiVersion: string; kind: string }[]): Promise<CreationRecorder> {
    const r = new CreationRecorder();
    const c = rest(kc);
    const w = new Watch(kc);
    for (const { apiVersion, kind } of kinds) {
      const p = await c.resourcePath(apiVersion, kind, null);
      const list = await c.request<{ metadata: { resourceVersion: string } }>('GET', p, { query: { limit: 1 } });
      r.aborts.push(
        await w.watch(
          p,
          { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: false },
          (type, obj: KubeObject) => {
            const key = objectKey({ kind, metadata: obj.metadata });
            if (type === 'ADDED' && !r.created.has(key)) r.created.set(key, BigInt(obj.metadata.resourceVersion as string));
          },
          () => undefined,
        ),
      );
    }
    return r;
  }

  stop(): void {
    for (const a of this.aborts) a.abort();
  }
}

export interface Application extends KubeObject {
  spec: { source: { path: string } };
  status?: {
    sync?: { status?: string; revision?: string };
    health?: { status?: string; message?: string };
    conditions?: { type: string; message?: string }[];
    operationState?: { phase?: string; message?: string; syncResult?: { revision?: string } };
    resources?: { group?: string; kind: string; namespace?: string; name: string; status?: string; health?: { status?: string; message?: string } }[];
  };
}

export async function applications(kc: KubeConfig, namespace: string): Promise<Application[]> {
  const c = rest(kc);
  return (await c.request<{ items: Application[] }>('GET', await c.resourcePath('argoproj.io/v1alpha1', 'Application', namespace))).items;
}

/** One line per Application that is not yet at `revision`, Synced, and done syncing. */
export function notSynced(apps: readonly Application[], revision: string): string[] {
  const out: string[] = [];
  for (const a of apps) {
    const s = a.status;
    const op = s?.operationState;
    const problem =
      s?.sync?.revision !== revision
        ? `at revision ${s?.sync?.revision ?? 'none'}`
        : s?.sync?.status !== 'Synced'
          ? `sync ${s?.sync?.status}`
          : op && op.phase !== 'Succeeded'
            ? `operation ${op.phase}: ${op.message}`
            : undefined;
    if (problem) out.push(`${a.metadata.name}: ${problem}${s?.conditions?.length ? ` (${s.conditions.map((c) => c.message).join('; ')})` : ''}`);
  }
  return out;
}
