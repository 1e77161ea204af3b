import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { KeelClient } from '../../src/client.js';
import { createOpenAIClient } from '../../src/model/client.js';
import type { ModelMode } from '../../src/model/config.js';
import type { Tool } from '../../src/tools/define-tool.js';
import { createKeelWorker } from '../../src/worker.js';
import type { BenchEnvironment } from './environment.js';
import { noopTool } from './noop-tool.js';

/** Options for {@link startKeelWorker}. */
export interface BenchWorkerOptions {
  modelUrl: string;
  tools?: readonly Tool[];
  modelMode?: ModelMode;
  taskQueue?: string;
  workerOptions?: Partial<WorkerOptions>;
  /** Another workflow bundle to host instead of Keel's (the what-if loops). */
  workflowBundle?: { codePath: string };
}

/** A Keel worker (in this process) on its own task queue and connection, with a client for it. */
export interface BenchWorker {
  worker: Worker;
  keel: KeelClient;
  taskQueue: string;
  /** The worker's own connection, as a worker process has; close it after the worker has stopped. */
  connection: NativeConnection;
}

/** Creates a Keel worker the way production does (`createKeelWorker`), offering the no-op tool. */
export async function startKeelWorker(
  environment: BenchEnvironment,
  options: BenchWorkerOptions,
): Promise<BenchWorker> {
  const taskQueue = options.taskQueue ?? `keel-bench-${randomUUID()}`;
  const workspace = await mkdtemp(path.join(environment.directory, 'workspace-'));
  // Workers sharing one connection were measured to wait longer for their workflow tasks.
  const connection = await NativeConnection.connect({ address: environment.address });
  const worker = await createKeelWorker({
    connection,
    namespace: environment.namespace,
    taskQueue,
    workspace,
    stateDirectory: await mkdtemp(path.join(environment.directory, 'state-')),
    openai: createOpenAIClient({ apiKey: 'sk-bench', baseURL: options.modelUrl }),
    defaultModel: 'bench-model',
    modelMode: options.modelMode ?? 'foreground',
    searchAttributes: environment.searchAttributes,
    tools: options.tools ?? [noopTool],
    workflowBundle: options.workflowBundle ?? environment.keelBundle,
    ...(options.workerOptions ? { workerOptions: options.workerOptions } : {}),
  });
  return { worker, taskQueue, connection, keel: new KeelClient(environment.client, taskQueue) };
}

/** Runs `body` while the worker polls, then shuts the worker down. */
export async function withKeelWorker<T>(
  environment: BenchEnvironment,
  options: BenchWorkerOptions,
  body: (worker: BenchWorker) => Promise<T>,
): Promise<T> {
  const started = await startKeelWorker(environment, options);
  try {
    return await started.worker.runUntil(body(started));
  } finally {
    await started.connection.close();
  }
}
