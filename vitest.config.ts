import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';
import { LongestFirstSequencer } from './test/sequencer.js';
import { browserTests, terminalTests, unitTests } from './test/tiers.js';

/**
 * A tier whose program this machine lacks is left out, saying so, unless `KEEL_TEST_ALL_TIERS=1`
 * (`.ci/run` sets it): there it runs and fails, so CI never passes by skipping.
 */
function lacking(tier: string, program: string, present: boolean): boolean {
  if (present || process.env.KEEL_TEST_ALL_TIERS === '1') return false;
  console.warn(`Leaving out the ${tier} tier: ${program} is not installed (CONTRIBUTING.md says how).`);
  return true;
}
const onPath = (program: string): boolean =>
  spawnSync('/bin/sh', ['-c', `command -v ${program}`]).status === 0;
const withoutTerminal = lacking('terminal', 'tmux', onPath('tmux'));
const withoutBrowser = lacking(
  'browser',
  'Chromium',
  existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'),
);

/**
 * How many test files run at once: `KEEL_TEST_WORKERS`, else one more than the cores. Tests wait
 * (on Temporal, on processes they start) about a third of the time, so one file per core left a
 * core idle that long: on 2 cores, 3 at once ran a 39-file slice of the integration tier in 194 s
 * against 219 s with 2, for 4% more CPU; twice the cores took as long as 2, each file slower.
 */
function testWorkers(): number {
  const configured = process.env.KEEL_TEST_WORKERS;
  if (configured === undefined) return Math.max(2, availableParallelism() + 1);
  const count = Number(configured);
  if (!Number.isInteger(count) || count < 1)
    throw new Error(
      `KEEL_TEST_WORKERS must be a whole number of at least 1, not ${JSON.stringify(configured)}`,
    );
  return count;
}

/**
 * `npm test` runs every tier; `npm run test:unit` (and `:integration`, `:terminal`, `:browser`) one
 * (CONTRIBUTING.md). The cluster suite needs the real server on PostgreSQL: `npm run test:cluster`.
 */
const withServer = {
  // One dev server, one workflow bundle and one copy of the built package for every tier that
  // needs them, however many of those tiers run (test/global-setup.ts).
  globalSetup: ['test/temporary-directory.ts', 'test/global-setup.ts'],
  setupFiles: ['test/setup.ts', 'test/setup-requests.ts'],
  // Native Temporal workers crash under worker_threads (sdk-typescript#876): isolate test files in processes.
  pool: 'forks',
  // A hang detector, not a speed goal (those are benchmarks): a test of three CLI processes that
  // takes 13 s alone took over 60 s on a machine loaded 7 times over, and failed there.
  testTimeout: 120_000,
  hookTimeout: 120_000,
} satisfies TestProjectInlineConfiguration['test'];

export default defineConfig({
  test: {
    maxWorkers: testWorkers(),
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          include: unitTests,
          // Every tier's TMPDIR is one directory for the run, removed when it ends.
          globalSetup: ['test/temporary-directory.ts'],
          setupFiles: ['test/setup-requests.ts'],
          pool: 'forks',
          // Pure logic: files share a process, so each pays for its imports once, not once per file.
          isolate: false,
          testTimeout: 30_000,
          hookTimeout: 30_000,
        },
      },
      {
        test: {
          ...withServer,
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/cluster/**',
            'test/real-model/**',
            'test/compose/**',
            '**/node_modules/**',
            ...unitTests,
            ...terminalTests,
            ...browserTests,
          ],
          isolate: false,
        },
      },
      ...(withoutTerminal ? [] : [{ test: { ...withServer, name: 'terminal', include: terminalTests } }]),
      ...(withoutBrowser ? [] : [{ test: { ...withServer, name: 'browser', include: browserTests } }]),
    ],
  },
});
