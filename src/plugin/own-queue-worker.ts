import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Worker } from '@temporalio/worker';
import { ACTIVITY_NAMES } from '../contract/activity-names.js';
import type { Logger } from '../logger.js';
import type { Prepared } from './prepare.js';

/** A worker's own task queue for the runs whose workspaces it holds, polled beside the shared one. */
export interface OwnQueue {
  taskQueue: string;
  /** Stops polling it and waits until its calls in flight are done. */
  stop(): Promise<void>;
}

/**
 * Starts polling `<task queue>/<worker id>` for the tool calls of runs whose workspaces this worker
 * made (Temporal's worker-specific task queue pattern), when it pins them; undefined otherwise. If
 * that worker fails, the main one is shut down too: a worker half there would take runs it cannot serve.
 */
export async function startOwnQueue(
  prepared: Prepared,
  worker: Worker,
  logger: Pick<Logger, 'error'>,
): Promise<OwnQueue | undefined> {
  const connection = worker.connection;
  if (prepared.serveOwnQueue === undefined || connection === undefined) return undefined;
  // Unique per process: a restarted worker has lost nothing it could serve from a queue of its own.
  const taskQueue = `${worker.options.taskQueue}/${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  const own = await Worker.create({
    connection,
    namespace: worker.options.namespace,
    taskQueue,
    // The main worker's codecs, failure converter and payload store: its tool calls' payloads are the same run's.
    dataConverter: {
      payloadCodecs: worker.options.loadedDataConverter.payloadCodecs,
      externalStorage: worker.options.loadedDataConverter.externalStorage,
      ...(worker.options.dataConverter?.failureConverterPath === undefined
        ? {}
        : { failureConverterPath: worker.options.dataConverter.failureConverterPath }),
    },
    activities: { [ACTIVITY_NAMES.executeTool]: prepared.activities[ACTIVITY_NAMES.executeTool] },
    shutdownGraceTime: worker.options.shutdownGraceTimeMs,
  });
  prepared.serveOwnQueue(taskQueue);
  const running = own.run().catch((error: unknown) => {
    logger.error(`The worker's own task queue ${taskQueue} stopped: ${(error as Error).message}`);
    if (worker.getState() === 'RUNNING') worker.shutdown();
  });
  return {
    taskQueue,
    async stop() {
      if (own.getState() === 'RUNNING') own.shutdown();
      await running;
    },
  };
}
