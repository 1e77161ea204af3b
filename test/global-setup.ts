import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { prepareBuiltKeel } from '../bench/support/built-keel.js';
import type { BuiltKeel } from '../bench/support/built-keel.js';
import { dynamicConfigArguments } from '../src/server-settings.js';
import { workflowsPath } from '../src/worker.js';
import { silentLogger } from './support/loggers.js';
import { freePort } from './support/free-port.js';
import { locateTemporalCli } from './support/temporal-cli.js';
import type { TemporalExecutable } from './support/temporal-cli.js';
import { createLocalEnvironment } from '../src/cli/dev-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    temporalNamespace: string;
    /** Path of the workflow bundle built once for the whole test run. */
    workflowBundlePath: string;
    /** How the dev server was started, for tests that run a server of their own. */
    temporalExecutable: TemporalExecutable;
    /**
     * A copy of the built package (`dist/`, built first when stale), made before any test runs: the
     * package test rebuilds `dist/` in place, so tests that run the built worker use this copy.
     */
    builtKeel: BuiltKeel;
  }
}

/** One ephemeral Temporal dev server and one workflow bundle for the whole test run. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const executable = await locateTemporalCli();
  const port = await freePort();
  const environment = await createLocalEnvironment(
    {
      server: {
        executable,
        ip: '127.0.0.1',
        port,
        log: { format: 'pretty', level: 'error' },
        extraArgs: dynamicConfigArguments(),
      },
    },
    (line) => console.error(line),
  );
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-test-'));
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

  project.provide('temporalAddress', `127.0.0.1:${port}`);
  project.provide('temporalNamespace', environment.namespace ?? 'default');
  project.provide('workflowBundlePath', bundlePath);
  project.provide('temporalExecutable', executable);
  project.provide('builtKeel', builtKeel);
  return async () => {
    await environment.teardown();
    await rm(directory, { recursive: true, force: true });
  };
}
