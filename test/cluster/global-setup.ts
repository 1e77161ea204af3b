import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { workflowsPath } from '../../src/worker.js';
import { silentLogger } from '../support/loggers.js';
import { locateTemporalCli } from '../support/temporal-cli.js';
import { temporalServerBuild } from './support/temporal-server.js';
import type { ServerBuild } from './support/temporal-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The real Temporal server's build (made once, cached by version). */
    serverBuild: ServerBuild;
    /** The `temporal` CLI binary, for the deployment's create-namespace script. */
    temporalCliPath: string;
  }
}

/**
 * Once for the cluster suite: the server build (built when the cache lacks it), the `temporal` CLI,
 * and one workflow bundle. Each test file runs its own PostgreSQL and server, which it kills.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const executable = await locateTemporalCli();
  if (executable.type !== 'existing-path')
    throw new Error('The cluster suite runs the temporal CLI for create-namespace.sh: install it (README).');
  const serverBuild = await temporalServerBuild();
  const directory = await mkdtemp(path.join(tmpdir(), 'keel-cluster-test-'));
  const bundlePath = path.join(directory, 'workflow-bundle.js');
  const bundle = await bundleWorkflowCode({ workflowsPath, logger: silentLogger });
  await writeFile(bundlePath, bundle.code);
  project.provide('serverBuild', serverBuild);
  project.provide('temporalCliPath', executable.path);
  project.provide('workflowBundlePath', bundlePath);
  return async () => {
    await rm(directory, { recursive: true, force: true });
  };
}
