import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode } from '@temporalio/worker';
import { ACTIVITY_NAMES } from '../src/contract/activity-names.js';
import { KeelClient } from '../src/client.js';
import { silentLogger } from '../test/support/loggers.js';
import type { ChildWorker } from './support/child-worker.js';
import { startDistWorker } from './support/dist-worker.js';
import type { BenchEnvironment } from './support/environment.js';
import { startKeelWorker } from './support/keel-worker.js';
import type { BenchWorker, BenchWorkerOptions } from './support/keel-worker.js';
import { plainLoop } from './support/plain-loop.js';
import type { WhatIfInput } from './what-if/workflows.js';

/** One way of running the benchmark agent. */
export interface Variant {
  name: string;
  label: string;
  /** Starts a run of `turns` turns and waits for it; returns the workflow id for Temporal variants. */
  run(task: string, turns: number): Promise<string | undefined>;
  environment?: BenchEnvironment;
  modelActivity?: string;
  /** The task queue of a worker in this process (the SDK metrics of this process are its). */
  inProcessTaskQueue?: string;
  /** The worker's own process, when it has one (its CPU time is read from `/proc`). */
  process?: ChildWorker;
  stop(): Promise<void>;
}

/** (a) Keel's model adapter and tool executor in a plain loop, no Temporal. */
export async function plainVariant(modelUrl: string, directory: string): Promise<Variant> {
  const plain = await plainLoop(modelUrl, directory);
  return {
    name: 'plain',
    label: '(a) plain loop, no Temporal',
    run: async (task, turns) => {
      await plain(task, turns);
      return undefined;
    },
    stop: () => Promise.resolve(),
  };
}

/** Starts a Keel run of `turns` turns with the no-op tool, waits for it, and throws unless it completed. */
async function runToCompletion(keel: KeelClient, task: string, turns: number): Promise<string> {
  const runId = await keel.startRun({ task, maxTurns: turns, tools: ['noop'] });
  const result = await keel.waitForResult(runId);
  if (result.status !== 'completed') throw new Error(`Keel run ${runId} ended ${result.status}`);
  return runId;
}

/** Keel's built worker (`node dist/worker.js`, environment configuration only) on `environment`. */
export async function distVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  modelUrl: string,
  localTool = false,
): Promise<Variant> {
  const { worker, taskQueue } = await startDistWorker({
    built: environment.built,
    address: environment.address,
    namespace: environment.namespace,
    modelUrl,
    directory: environment.directory,
    localTool,
  });
  const keel = new KeelClient(environment.client, taskQueue);
  return {
    name,
    label,
    environment,
    modelActivity: ACTIVITY_NAMES.callModel,
    process: worker,
    run: (task, turns) => runToCompletion(keel, task, turns),
    stop: () => worker.stop(),
  };
}

/** The `@temporalio/openai-agents` agent, its worker in a process of its own, on `environment`. */
export async function agentsVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  modelUrl: string,
  bundlePath: string,
): Promise<Variant> {
  // Imported here so that a broken install of the optional comparison cannot stop the other benchmarks.
  const { startAgentsWorker } = await import('./agents/worker.js');
  const agents = await startAgentsWorker(environment, { modelUrl, bundlePath });
  return {
    name,
    label,
    environment,
    modelActivity: 'invokeModelActivity',
    process: agents.worker,
    async run(task, turns) {
      // Its max turns count the final answer's turn apart.
      const workflowId = await agents.start(task, turns + 1);
      await agents.result(workflowId);
      return workflowId;
    },
    stop: () => agents.worker.stop(),
  };
}

/** A variant served by a Keel worker in this process; `run` starts one run on it and returns its workflow id. */
async function inProcessVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  options: BenchWorkerOptions,
  run: (started: BenchWorker, task: string, turns: number) => Promise<string>,
): Promise<Variant> {
  const started = await startKeelWorker(environment, options);
  const running = started.worker.run();
  // stop() awaits it and fails there; until then a worker failure must not go unhandled.
  running.catch(() => undefined);
  return {
    name,
    label,
    environment,
    modelActivity: ACTIVITY_NAMES.callModel,
    inProcessTaskQueue: started.taskQueue,
    run: (task, turns) => run(started, task, turns),
    async stop() {
      started.worker.shutdown();
      await running;
      await started.connection.close();
    },
  };
}

/** Keel's `createKeelWorker` in the benchmark's own process (the TypeScript source under tsx). */
export function keelInProcessVariant(environment: BenchEnvironment, modelUrl: string): Promise<Variant> {
  return inProcessVariant(
    'keelInProcess',
    '(b‴) Keel in the bench process (src/, tsx)',
    environment,
    { modelUrl },
    (started, task, turns) => runToCompletion(started.keel, task, turns),
  );
}

/** Bundles the what-if loops (`what-if/workflows.ts`) into `directory`. */
export async function bundleWhatIf(directory: string): Promise<string> {
  const bundlePath = path.join(directory, 'what-if-workflows.js');
  const bundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./what-if/workflows.ts', import.meta.url)),
    logger: silentLogger,
  });
  await writeFile(bundlePath, bundle.code);
  return bundlePath;
}

/** Keel's activities driven by the smallest workflow that does the same loop, in this process. */
export function whatIfVariant(
  name: string,
  label: string,
  environment: BenchEnvironment,
  modelUrl: string,
  bundlePath: string,
  localTool: boolean,
): Promise<Variant> {
  const options = { modelUrl, workflowBundle: { codePath: bundlePath } };
  return inProcessVariant(name, label, environment, options, async (started, task, turns) => {
    const workflowId = `what-if-${randomUUID()}`;
    const input: WhatIfInput = { task, maxTurns: turns, localTool };
    await environment.client.workflow.execute('whatIfLoop', {
      taskQueue: started.taskQueue,
      workflowId,
      args: [input],
    });
    return workflowId;
  });
}
