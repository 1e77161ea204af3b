import { randomUUID } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { IN_PROCESS_WORKER } from './harness.js';
import type { TestServer } from './harness.js';

/**
 * A worker with Keel's workflows and only the activities a test gives it (a worker of another version,
 * a plugin's own model activity), on a task queue of its own.
 */
export async function bareWorker(
  server: TestServer,
  activities: Record<string, (...args: never[]) => Promise<unknown>>,
): Promise<{ worker: Worker; taskQueue: string }> {
  const taskQueue = `keel-test-${randomUUID()}`;
  const worker = await Worker.create({
    connection: server.connection,
    namespace: inject('temporalNamespace'),
    taskQueue,
    workflowBundle: { codePath: inject('workflowBundlePath') },
    activities,
    ...IN_PROCESS_WORKER,
  });
  return { worker, taskQueue };
}
