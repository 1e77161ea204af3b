import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { prepareBuiltKeel } from '../bench/support/built-keel.js';
import type { BuiltKeel } from '../bench/support/built-keel.js';
import { dynamicConfigArguments, KEEL_SERVER_DYNAMIC_CONFIG } from '../src/server-settings.js';
import { workflowsPath } from '../src/worker.js';
import { silentLogger } from './support/loggers.js';
import { freePort } from './support/free-port.js';
import { locateTemporalCli } from './support/temporal-cli.js';
import type { TemporalExecutable } from './support/temporal-cli.js';
import { createLocalEnvironment } from '../src/cli/dev-server.js';
import { compileProcessWorker } from './support/process/compile-worker.js';

/** The test server's task queues have one partition each (Temporal's default is four). */
const TEST_SERVER_PARTITIONS = {
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/** What the global set-up provides to the tests of every tier with a server (`inject`). */
interface Provided {
  temporalAddress: string;
  temporalNamespace: string;
  /** Path of the workflow bundle built once for the whole test run. */
  workflowBundlePath: string;
  /** How the dev server was started, for tests that run a server of their own. */
  temporalExecutable: TemporalExecutable;
  /**
   * A copy of the built package (`dist/`, built first when stale), made before any test runs: the
   * package test rebuilds `dist/` in place when the source changed meanwhile, and a contributor may
   * rebuild it while tests run, so tests that run the built code (the CLI, the worker) use this copy.
   */
  builtKeel: BuiltKeel;
  /** The process fixtures' worker compiled against that copy (test/support/process/compile-worker.ts). */
  processWorkerEntry: string;
}

declare module 'vitest' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the augmentation is the point
  export interface ProvidedContext extends Provided {}
}

/** The set-up shared by every tier of one vitest process, and how many tiers still use it. */
interface Shared {
  provided: Promise<Provided>;
  teardown: () => Promise<void>;
  users: number;
}

// Vitest runs a project's global setup once per project (tier), each loading this module anew:
// the shared state lives on the vitest process's global object, so the tiers share one server.
const key = Symbol.for('keel.test.global-setup');
const shared = globalThis as { [key]?: Shared };

/**
 * One ephemeral Temporal dev server, one workflow bundle and one copy of the built package for the
 * whole test run, shared by every tier that runs (integration, terminal, browser).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let state = shared[key];
  if (state === undefined) {
    const teardowns: Array<() => Promise<void>> = [];
    state = {
      provided: start(teardowns).catch(async (error: unknown) => {
        // Whatever did start (the server, say) must not outlive a set-up that failed.
        for (const teardown of teardowns.reverse()) await teardown().catch(() => undefined);
        throw error;
      }),
      teardown: async () => {
        for (const teardown of teardowns.reverse()) await teardown();
      },
      users: 0,
    };
    shared[key] = state;
  }
  state.users += 1;
  const provided = await state.provided;
  for (const [name, value] of Object.entries(provided))
    project.provide(name as keyof Provided, value as never);
  const current = state;
  return async () => {
    current.users -= 1;
    if (current.users > 0) return;
    delete shared[key];
    await current.teardown();
  };
}

async function start(teardowns: Array<() => Promise<void>>): Promise<Provided> {
  const executable = await locateTemporalCli();
  const port = await freePort();
  const environment = await createLocalEnvironment(
    {
      server: {
        executable,
        ip: '127.0.0.1',
        port,
        log: { format: 'pretty', level: 'error' },
        // One partition per task queue instead of four: every test makes task queues of its own, and
        // each partition is loaded, polled and forwarded to on its own. On a subset of the
        // integration tier (39 files) this took 10% less time and 9% less CPU (CONTRIBUTING.md).
        extraArgs: dynamicConfigArguments({ ...KEEL_SERVER_DYNAMIC_CONFIG, ...TEST_SERVER_PARTITIONS }),
      },
    },
    (line) => console.error(line),
  );
  teardowns.push(() => environment.teardown());
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-test-'));
  teardowns.push(() => rm(directory, { recursive: true, force: true }));
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  const bundle = await bundleWorkflowCode({
    workflowsPath,
    logger: {
      ...silentLogger,
      warn: (message: string) => console.warn(message),
      error: (message: string) => console.error(message),
    },
  });
  await writeFile(bundlePath, bundle.code);
  const builtKeel = await prepareBuiltKeel(directory, (line) => console.error(line));
  const processWorkerEntry = await compileProcessWorker(builtKeel.root);
  return {
    temporalAddress: `127.0.0.1:${port}`,
    temporalNamespace: environment.namespace ?? 'default',
    workflowBundlePath: bundlePath,
    temporalExecutable: executable,
    builtKeel,
    processWorkerEntry,
  };
}
