import { defineConfig } from 'vitest/config';

// Two projects: `unit` is pure (no processes, no network beyond loopback doubles);
// `integration` starts a real kube-apiserver + etcd once (test/integration/global-setup.ts).
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
    ],
  },
});
