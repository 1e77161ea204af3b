/**
 * The `@temporalio/openai-agents` agent's worker in a process of its own, as Keel's built worker
 * runs in its own, so that both pay for their own process and are measured alike from outside
 * (`/proc`). Configured by `AGENTS_BENCH_WORKER` (JSON: address, namespace, taskQueue, modelUrl,
 * bundlePath); SDK defaults otherwise. Says `agents worker ready` on stdout once created; SIGTERM
 * shuts it down (Temporal's runtime handles the signal).
 */
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.js';
import { agentsPlugin } from './plugin.js';

/** What the worker process is told at start. */
export interface AgentsWorkerConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  modelUrl: string;
  bundlePath: string;
}

const config = JSON.parse(process.env.AGENTS_BENCH_WORKER ?? '{}') as AgentsWorkerConfig;
const connection = await NativeConnection.connect({ address: config.address });
try {
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    activities,
    workflowBundle: { codePath: config.bundlePath },
    plugins: [agentsPlugin(config.modelUrl)],
  });
  console.log('agents worker ready');
  await worker.run();
} finally {
  await connection.close();
}
