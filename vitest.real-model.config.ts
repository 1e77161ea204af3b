import { defineConfig } from 'vitest/config';

/**
 * `npm run test:real-model`: Keel against llama.cpp's own server and a tiny real model
 * (test/real-model/; CONTRIBUTING.md). Its own command, not part of `npm test`: the server is built
 * once per machine (about 10 minutes cold, scripts/llama/llama-server.sh), and CI builds it in the
 * background while `npm test` runs. One file at a time: a CPU generates one answer at a time.
 */
export default defineConfig({
  test: {
    include: ['test/real-model/**/*.test.ts'],
    globalSetup: ['test/temporary-directory.ts', 'test/global-setup.ts'],
    setupFiles: ['test/setup.ts', 'test/setup-requests.ts'],
    pool: 'forks',
    maxWorkers: 1,
    testTimeout: 120_000,
    // The first use builds llama-server when no cache holds it.
    hookTimeout: 1_800_000,
  },
});
