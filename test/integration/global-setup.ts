// vitest globalSetup for the `integration` project: a real API server for every test file.
//
// 1. Reuse a running cluster when TEST_CLUSTER_KUBECONFIG is set (with TEST_CLUSTER_DIR pointing
//    at its state dir when tests need per-user kubeconfigs); otherwise
//    `scripts/test-cluster start --with-nodes` (idempotent: reuses a cluster already running in
//    TEST_CLUSTER_DIR; builds/caches binaries on first use): kube-controller-manager,
//    kube-scheduler and kwok's fake Nodes, whose Stages write what kubelets, KubeVirt and CDI write.
// 2. Install the vendored CRDs from imports/crds/ by server-side apply and wait until Established
//    (before the controller manager and kwok start, so both see the custom resources).
// 3. Expose the admin kubeconfig: inject('testClusterKubeconfig') / inject('testClusterDir') in
//    tests, and process.env.KUBECONFIG / TEST_CLUSTER_KUBECONFIG / TEST_CLUSTER_DIR.
// 4. Teardown stops the cluster if this run started it, unless TEST_CLUSTER_KEEP=1.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { TestProject } from 'vitest/node';
import { loadKubeConfig, REPO_ROOT, rest, serverSideApply, TEST_CLUSTER_SCRIPT, waitFor, type KubeObject } from './cluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin (system:masters) kubeconfig path of the test cluster. */
    testClusterKubeconfig: string;
    /** State dir of scripts/test-cluster ('' when reusing a foreign cluster). */
    testClusterDir: string;
  }
}

const CRD_DIR = path.join(REPO_ROOT, 'imports/crds');
/** Vendored CRDs the tests need (not Argo CD ApplicationSets). */
const CRD_FILES = (files: string[]) =>
  files.filter(
    (f) =>
      /^crownlabs\.polito\.it_.*\.yaml$/.test(f) ||
      /^kubevirt\.io_.*\.yaml$/.test(f) ||
      f === 'cdi.kubevirt.io_datavolumes.yaml' ||
      f === 'argoproj.io_applications.yaml' ||
      f === 'argoproj.io_appprojects.yaml',
  );

const truthy = (v: string | undefined) => v !== undefined && v !== '' && v !== '0' && v !== 'false';

function log(msg: string) {
  process.stderr.write(`[integration] ${msg}\n`);
}

/** Run scripts/test-cluster; stderr goes to ours (build progress), stdout is returned. */
function testCluster(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(TEST_CLUSTER_SCRIPT, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

export async function installCrds(kubeconfig: string): Promise<void> {
  const kc = loadKubeConfig(kubeconfig);
  const files = CRD_FILES(readdirSync(CRD_DIR)).sort();
  const crds: KubeObject[] = [];
  for (const f of files) {
    for (const doc of parseAllDocuments(readFileSync(path.join(CRD_DIR, f), 'utf8'))) {
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
  log(`installed ${crds.length} CRDs from ${files.length} files`);
}

export default async function setup(project: TestProject) {
  const t0 = Date.now();
  let kubeconfig = process.env.TEST_CLUSTER_KUBECONFIG;
  let dir = process.env.TEST_CLUSTER_DIR ?? '';
  let startedHere = false;
  let crdsInstalled = false;
  const env: NodeJS.ProcessEnv = { ...process.env };

  if (kubeconfig) {
    log(`reusing cluster from TEST_CLUSTER_KUBECONFIG=${kubeconfig}`);
  } else {
    const wasRunning = (await testCluster(['status'], env)).code === 0;
    // API server first, CRDs, then the controller manager and the nodes: the garbage collector
    // then watches the custom resources from the start instead of after its 30s discovery
    // resync, and kwok loads its KubeVirt and CDI Stages only when their CRDs are served.
    const start = async (args: string[]) => {
      const { code, stdout } = await testCluster(['start', ...args], { ...env, TEST_CLUSTER_CONTROLLERS: '0' });
      if (code !== 0) throw new Error(`scripts/test-cluster start failed (exit ${code}); see the messages above`);
      return stdout.trim().split('\n').pop()!;
    };
    kubeconfig = await start([]);
    startedHere = !wasRunning;
    dir = path.dirname(kubeconfig); // the admin kubeconfig is $TEST_CLUSTER_DIR/kubeconfig
    try {
      await installCrds(kubeconfig);
      crdsInstalled = true;
      await start(['--with-nodes']);
    } catch (e) {
      // vitest runs no teardown when setup fails: don't leave processes behind.
      if (startedHere && !truthy(process.env.TEST_CLUSTER_KEEP)) await testCluster(['stop'], env);
      throw e;
    }
  }

  process.env.KUBECONFIG = kubeconfig;
  process.env.TEST_CLUSTER_KUBECONFIG = kubeconfig;
  if (dir) process.env.TEST_CLUSTER_DIR = dir;
  project.provide('testClusterKubeconfig', kubeconfig);
  project.provide('testClusterDir', dir);

  if (!crdsInstalled) await installCrds(kubeconfig); // reused cluster: make sure they are current
  log(`cluster ready in ${((Date.now() - t0) / 1000).toFixed(1)}s (kubeconfig: ${kubeconfig})`);

  return async () => {
    if (!startedHere) return;
    if (truthy(process.env.TEST_CLUSTER_KEEP)) {
      log(`TEST_CLUSTER_KEEP set: leaving the cluster running; stop it with: scripts/test-cluster stop`);
      return;
    }
    await testCluster(['stop'], env);
  };
}
