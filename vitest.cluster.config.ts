import { defineConfig } from 'vitest/config';

/**
 * `npm run test:cluster`: the real Temporal server on PostgreSQL (CONTRIBUTING.md). One file at a
 * time: each file runs a cluster of its own, and the machine has two cores.
 */
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    globalSetup: ['test/temporary-directory.ts', 'test/cluster/global-setup.ts'],
    setupFiles: ['test/setup.ts', 'test/setup-requests.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 300_000,
    hookTimeout: 180_000,
  },
});
