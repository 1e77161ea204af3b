/**
 * A Keel worker in its own process, for benchmarks that measure the worker's CPU time and memory
 * apart from the client, the model server and the Temporal server. Configured by one JSON
 * environment variable; answers `usage` messages and stops on `stop` (IPC).
 */
import { NativeConnection } from '@temporalio/worker';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOpenAIClient } from '../../src/model/client.js';
import { createKeelWorker } from '../../src/worker.js';
import { noopTool } from './noop-tool.js';
import type { WorkerProcessConfig, WorkerProcessMessage, WorkerUsage } from './worker-process.js';

Runtime.install({ logger: new DefaultLogger('ERROR') });

const config = JSON.parse(process.env.KEEL_BENCH_WORKER ?? '{}') as WorkerProcessConfig;
const connection = await NativeConnection.connect({ address: config.address });
const worker = await createKeelWorker({
  connection,
  namespace: config.namespace,
  taskQueue: config.taskQueue,
  workspace: await mkdtemp(path.join(tmpdir(), 'keel-bench-workspace-')),
  stateDirectory: await mkdtemp(path.join(tmpdir(), 'keel-bench-state-')),
  openai: createOpenAIClient({ apiKey: 'sk-bench', baseURL: config.modelUrl }),
  defaultModel: 'bench-model',
  modelMode: 'foreground',
  searchAttributes: config.searchAttributes,
  tools: [noopTool],
  workflowBundle: { codePath: config.bundlePath },
  workerOptions: config.workerOptions,
});

const usage = (): WorkerUsage => {
  const cpu = process.cpuUsage();
  return {
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    rssMiB: process.memoryUsage.rss() / 1024 / 1024,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  };
};
process.on('message', (message: WorkerProcessMessage) => {
  if (message.type === 'usage') process.send?.({ type: 'usage', usage: usage() });
  if (message.type === 'stop') worker.shutdown();
});
process.send?.({ type: 'ready', usage: usage() });
await worker.run();
await connection.close();
process.disconnect?.();
