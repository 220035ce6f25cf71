import { defineConfig } from 'vitest/config';
import { e62be9eWorkerEnv } from './test/integration-e62be9e/location.ts';

// Four projects: `unit` is pure (no processes, no network beyond loopback doubles);
// `integration` starts a real kube-apiserver + etcd once (test/integration/global-setup.ts) with
// the 2e8aeb9 CRDs; `integration-e62be9e` a second cluster with the e62be9e CRDs (docs/test-cluster.md);
// `fuzz` is the adversarial suite (docs/test-cluster.md, "Fuzz suite"): a fixed seed and budget here, more with `npm run fuzz`.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // CLI tests spawn the real binary (~2 s each through tsx); leave room on a busy 2-core machine.
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
      {
        test: {
          name: 'integration-e62be9e',
          include: ['test/integration-e62be9e/**/*.test.ts'],
          globalSetup: ['test/integration-e62be9e/global-setup.ts'],
          // Its own cluster for its workers and what they spawn; without this they would inherit
          // the 2e8aeb9 cluster's variables that global setup sets in vitest's process.
          env: e62be9eWorkerEnv(),
          testTimeout: 120_000,
          hookTimeout: 600_000,
          // Its files run in parallel, so vitest puts them beside `unit` and `fuzz` instead of
          // in the one-worker group that runs `integration` last (docs/test-cluster.md).
        },
      },
      {
        test: {
          name: 'fuzz',
          include: ['test/fuzz/**/*.test.ts'],
          // The documents' fuzzers send a sample of what synth/gitops write to the real API server.
          globalSetup: ['test/integration/global-setup.ts'],
          // Each property sets its own limit from its budget (support/settings.ts).
          testTimeout: 600_000,
          hookTimeout: 180_000,
        },
      },
    ],
  },
});
