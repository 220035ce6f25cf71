// vitest globalSetup for the `integration` and `fuzz` projects: a real API server at API level
// 2e8aeb9 for every test file (test/integration-e62be9e/global-setup.ts is the e62be9e twin).
//
// 1. Reuse a running cluster when TEST_CLUSTER_KUBECONFIG is set (with TEST_CLUSTER_DIR pointing
//    at its state dir when tests need per-user kubeconfigs); otherwise
//    `scripts/test-cluster start --with-nodes` in TEST_CLUSTER_DIR (cluster-setup.ts):
//    kube-controller-manager, kube-scheduler and kwok's fake Nodes, whose Stages write what
//    kubelets, KubeVirt and CDI write.
// 2. Install the vendored 2e8aeb9 CRDs (imports/crds/) by server-side apply and wait until
//    Established (before the controller manager and kwok start, so both see the custom resources).
// 3. Expose the admin kubeconfig: inject('testClusterKubeconfig') / inject('testClusterDir') in
//    tests, and process.env.KUBECONFIG / TEST_CLUSTER_KUBECONFIG / TEST_CLUSTER_DIR (the workers
//    of projects without their own `env` inherit these; the e62be9e project sets its own).
// 4. Teardown stops the cluster if this run started it, unless TEST_CLUSTER_KEEP=1.
import type { TestProject } from 'vitest/node';
import { startOrReuseCluster } from './cluster-setup.ts';

export default async function setup(project: TestProject) {
  const cluster = await startOrReuseCluster({
    level: '2e8aeb9',
    reuseKubeconfig: process.env.TEST_CLUSTER_KUBECONFIG,
    dir: process.env.TEST_CLUSTER_DIR,
    label: 'integration',
  });
  process.env.KUBECONFIG = cluster.kubeconfig;
  process.env.TEST_CLUSTER_KUBECONFIG = cluster.kubeconfig;
  if (cluster.dir) process.env.TEST_CLUSTER_DIR = cluster.dir;
  project.provide('testClusterKubeconfig', cluster.kubeconfig);
  project.provide('testClusterDir', cluster.dir);
  return () => cluster.stop();
}
