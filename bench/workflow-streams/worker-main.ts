/**
 * The workflow-streams comparison's worker in a process of its own, measured from outside (`/proc`)
 * as Keel's built worker is. Configured by `WORKFLOW_STREAMS_BENCH_WORKER` (JSON: address, namespace,
 * taskQueue, modelUrl); SDK defaults otherwise. Says `workflow-streams worker ready` once created;
 * SIGTERM shuts it down.
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createStreamActivities } from './activities.js';

/** What the worker process is told at start. */
export interface WorkflowStreamsWorkerConfig {
  address: string;
  namespace: string;
  taskQueue: string;
  modelUrl: string;
}

const config = JSON.parse(process.env.WORKFLOW_STREAMS_BENCH_WORKER ?? '{}') as WorkflowStreamsWorkerConfig;
const connection = await NativeConnection.connect({ address: config.address });
try {
  const worker = await Worker.create({
    connection,
    namespace: config.namespace,
    taskQueue: config.taskQueue,
    activities: createStreamActivities({ modelUrl: config.modelUrl }),
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  });
  console.log('workflow-streams worker ready');
  await worker.run();
} finally {
  await connection.close();
}
