import { defineConfig } from 'vitest/config';

/**
 * `npm run test:compose`: docker-compose.yml brought up with Podman and the upstream images' local
 * stand-ins (test/compose/; CONTRIBUTING.md, "The compose tier"). Its own command, not part of
 * `npm test`: it needs root for Podman, builds images, and the Temporal server build of the cluster
 * suite. One file at a time.
 */
export default defineConfig({
  test: {
    include: ['test/compose/**/*.test.ts'],
    globalSetup: ['test/temporary-directory.ts'],
    setupFiles: ['test/setup-requests.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 600_000,
    // The first use builds the images (and the Temporal server when no cache holds it).
    hookTimeout: 1_800_000,
  },
});
