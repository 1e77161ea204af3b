import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ChildWorker } from '../support/child-worker.js';
import type { BenchEnvironment } from '../support/environment.js';
import type { StreamedRunInput } from './events.js';
import type { WorkflowStreamsWorkerConfig } from './worker-main.js';

const workerMain = fileURLToPath(new URL('./worker-main.ts', import.meta.url));

/** The workflow-streams comparison's worker process and how to start its runs. */
export interface WorkflowStreamsBench {
  worker: ChildWorker;
  taskQueue: string;
  /** Starts one run; returns its workflow id. */
  start(input: StreamedRunInput): Promise<string>;
}

/**
 * Starts the comparison's worker in its own process (`worker-main.ts` through tsx, which bundles
 * its workflow at start) on a task queue of its own.
 */
export async function startWorkflowStreamsWorker(
  environment: BenchEnvironment,
  modelUrl: string,
): Promise<WorkflowStreamsBench> {
  const taskQueue = `workflow-streams-bench-${randomUUID()}`;
  const config: WorkflowStreamsWorkerConfig = {
    address: environment.address,
    namespace: environment.namespace,
    taskQueue,
    modelUrl,
  };
  const { worker } = await ChildWorker.start({
    name: 'the @temporalio/workflow-streams worker',
    executable: process.execPath,
    args: ['--import', 'tsx', workerMain],
    env: { ...process.env, WORKFLOW_STREAMS_BENCH_WORKER: JSON.stringify(config) },
    ready: /workflow-streams worker ready/,
  });
  return {
    worker,
    taskQueue,
    async start(input) {
      const workflowId = `workflow-streams-bench-${randomUUID()}`;
      await environment.client.workflow.start('workflowStreamsRun', { taskQueue, workflowId, args: [input] });
      return workflowId;
    },
  };
}
