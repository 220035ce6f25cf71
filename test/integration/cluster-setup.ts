// What the global setups of the cluster projects share (test/integration/global-setup.ts for the
// 2e8aeb9 cluster, test/integration-e62be9e/global-setup.ts for the e62be9e one): start or reuse a
// scripts/test-cluster cluster in a state dir and install one API level's CRDs into it.
//
// This runs in vitest's main process, where every project's global setup runs: nothing here reads
// or writes process.env's cluster variables; the caller says which state dir and kubeconfig.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { crownlabsCrdsDir, DEFAULT_API_LEVEL, type ApiLevel } from '../../src/inputs/api-level.ts';
import { crdsDir } from '../../src/paths.ts';
import { loadKubeConfig, rest, serverSideApply, TEST_CLUSTER_SCRIPT, waitFor, type KubeObject } from './cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin (system:masters) kubeconfig path of the project's test cluster. */
    testClusterKubeconfig: string;
    /** State dir of scripts/test-cluster ('' when reusing a foreign cluster). */
    testClusterDir: string;
  }
}

/** The third-party CRDs the tests need (not Argo CD ApplicationSets); the same at every level. */
const THIRD_PARTY_CRD = (f: string) =>
  /^kubevirt\.io_.*\.yaml$/.test(f) ||
  f === 'cdi.kubevirt.io_datavolumes.yaml' ||
  f === 'argoproj.io_applications.yaml' ||
  f === 'argoproj.io_appprojects.yaml' ||
  /^gateway\.networking\.k8s\.io_(httproutes|gateways|gatewayclasses|referencegrants)\.yaml$/.test(f) ||
  f === 'gateway.envoyproxy.io_securitypolicies.yaml' ||
  /^metallb\.io_.*\.yaml$/.test(f);
const CROWNLABS_CRD = (f: string) => /^crownlabs\.polito\.it_.*\.yaml$/.test(f);

export const truthy = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';

/** The CRD files of a level: its CrownLabs CRDs and the third-party ones, sorted by path. */
export function crdFiles(level: ApiLevel): string[] {
  const crownlabs = crownlabsCrdsDir(level);
  return [
    ...readdirSync(crownlabs).filter(CROWNLABS_CRD).map((f) => path.join(crownlabs, f)),
    ...readdirSync(crdsDir()).filter(THIRD_PARTY_CRD).map((f) => path.join(crdsDir(), f)),
  ].sort();
}

/**
 * Installs a level's CRDs by server-side apply and waits until each is Established. CRDs are
 * cluster-wide: one cluster holds one level.
 */
export async function installCrds(kubeconfig: string, level: ApiLevel = DEFAULT_API_LEVEL, label = 'integration'): Promise<void> {
  const kc = loadKubeConfig(kubeconfig);
  const files = crdFiles(level);
  const crds: KubeObject[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(f, 'utf8'))) {
      const obj = doc.toJS() as KubeObject | null;
      if (obj?.kind === 'CustomResourceDefinition') crds.push(obj);
    }
  }
  // Server-side apply: idempotent on a reused cluster, and no last-applied annotation (the
  // KubeVirt CRDs are larger than the 256 KiB annotation limit of client-side apply).
  await Promise.all(crds.map((crd) => serverSideApply(crd, { kubeConfig: kc, fieldManager: 'crownlabs-test-setup' })));
  const c = rest(kc);
  await Promise.all(
    crds.map((crd) =>
      waitFor(
        async () => {
          const live = await c.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`);
          return (live.status?.conditions ?? []).some((x: any) => x.type === 'Established' && x.status === 'True');
        },
        { timeoutMs: 60_000, message: `CRD ${crd.metadata.name} Established` },
      ),
    ),
  );
  log(label, `installed ${crds.length} CRDs (level ${level}) from ${files.length} files`);
}

export function log(label: string, msg: string) {
  process.stderr.write(`[${label}] ${msg}\n`);
}

/** Run scripts/test-cluster; stderr goes to ours (build progress), stdout is returned. */
export function testCluster(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TEST_CLUSTER_SCRIPT, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

export interface ClusterOptions {
  level: ApiLevel;
  /** A running cluster's admin kubeconfig: reuse it (its CRDs are still applied). */
  reuseKubeconfig?: string;
  /** State dir of a reused cluster ('' when foreign), or where scripts/test-cluster starts one (undefined: the script's default). */
  dir?: string;
  /** Prefix of the log lines (the vitest project). */
  label: string;
}

export interface TestCluster {
  kubeconfig: string;
  /** The state dir ('' for a foreign cluster). */
  dir: string;
  /** Stops the cluster if this call started it, unless TEST_CLUSTER_KEEP=1. */
  stop(): Promise<void>;
}

/**
 * Reuses the cluster at `reuseKubeconfig`, or `scripts/test-cluster start --with-nodes` in `dir`
 * (idempotent: reuses a cluster already running there; builds/caches binaries on first use), then
 * installs the level's CRDs. Order on a start: API server, CRDs, then the controller manager and
 * the nodes: the garbage collector then watches the custom resources from the start instead of
 * after its 30s discovery resync, kwok loads its KubeVirt and CDI Stages only when their CRDs
 * are served, and MetalLB's controller starts only when its CRDs are.
 */
export async function startOrReuseCluster(opts: ClusterOptions): Promise<TestCluster> {
  const t0 = Date.now();
  const { level, label } = opts;
  const env: NodeJS.ProcessEnv = { ...process.env, ...(opts.dir ? { TEST_CLUSTER_DIR: opts.dir } : {}) };
  const keep = () => truthy(process.env.TEST_CLUSTER_KEEP);
  let kubeconfig = opts.reuseKubeconfig;
  let dir = opts.dir ?? '';
  let startedHere = false;

  if (kubeconfig) {
    log(label, `reusing cluster from ${kubeconfig}`);
    await installCrds(kubeconfig, level, label); // make sure they are current
  } else {
    const wasRunning = (await testCluster(['status'], env)).code === 0;
    const start = async (args: string[]) => {
      const { code, stdout } = await testCluster(['start', ...args], { ...env, TEST_CLUSTER_CONTROLLERS: '0' });
      if (code !== 0) throw new Error(`scripts/test-cluster start failed (exit ${code}); see the messages above`);
      return stdout.trim().split('\n').pop()!;
    };
    kubeconfig = await start([]);
    startedHere = !wasRunning;
    dir = path.dirname(kubeconfig); // the admin kubeconfig is $TEST_CLUSTER_DIR/kubeconfig
    try {
      await installCrds(kubeconfig, level, label);
      await start(['--with-nodes']);
    } catch (e) {
      // vitest runs no teardown when setup fails: don't leave processes behind.
      if (startedHere && !keep()) await testCluster(['stop'], env);
      throw e;
    }
  }
  log(label, `cluster (level ${level}) ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (kubeconfig: ${kubeconfig})`);

  return {
    kubeconfig,
    dir,
    async stop() {
      if (!startedHere) return;
      if (keep()) {
        log(label, `TEST_CLUSTER_KEEP set: leaving the cluster running; stop it with: TEST_CLUSTER_DIR=${dir} scripts/test-cluster stop`);
        return;
      }
      await testCluster(['stop'], env);
    },
  };
}
