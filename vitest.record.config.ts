import { defineConfig } from 'vitest/config';

/** `npm run record-histories`: the recorder only, with the same server and bundle set-up as the tests. */
export default defineConfig({
  test: {
    include: ['scripts/record-histories.ts'],
    globalSetup: ['test/temporary-directory.ts', 'test/global-setup.ts'],
    setupFiles: ['test/setup.ts', 'test/setup-requests.ts'],
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
