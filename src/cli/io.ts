import { hostname } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { KeelClient } from '../client.js';
import { unreachableTemporal } from '../config-error.js';
import { taskQueueFromEnvironment } from '../config.js';
import { clientDataConverterFromEnvironment } from '../data-converter.js';
import { resolveTarget } from './embedded.js';
import type { TemporalTarget } from './embedded.js';
import type { Output } from './output.js';
import { processIdentity } from './process-identity.js';

// The commands import these from here; main.ts imports them from output.js alone, to start light.
export { CliFailure, EXIT, output, reasonOf, UsageError } from './output.js';
export type { JsonError, Output } from './output.js';

/** Project-local data of the embedded server (`.keel/` in the current directory). */
export function dataDirectory(): string {
  return path.resolve(process.env.KEEL_DATA_DIR?.trim() || '.keel');
}

/** The task queue from `--task-queue`, else `KEEL_TASK_QUEUE`, else `keel`. */
export function taskQueueOf(option: string | undefined): string {
  return option?.trim() || taskQueueFromEnvironment();
}

/** A client on the target cluster, and how to let go of it. */
export async function connectClient(
  target: TemporalTarget,
  taskQueue: string,
): Promise<{ keel: KeelClient; close(): Promise<void> }> {
  const address = target.connectionOptions.address ?? 'localhost:7233';
  // Before connecting: a bad key or store setting is the error to see, not a connection made for nothing.
  const dataConverter = await clientDataConverterFromEnvironment();
  const connection = await Connection.connect({ ...target.connectionOptions, connectTimeout: '5s' }).catch(
    (error: unknown) => {
      throw unreachableTemporal(address, error, target.connectionOptions);
    },
  );
  return {
    keel: new KeelClient(new Client({ connection, namespace: target.namespace, dataConverter }), taskQueue),
    close: () => connection.close(),
  };
}

/**
 * Whether some worker polls the task queue (the client's, or `taskQueue`) for workflow tasks, as the
 * server saw lately (then nobody needs to host one). The server lists a poller for about a minute
 * after its last poll, so a worker of this machine whose process has ended (the one the previous
 * `keel run` hosted) does not count: with it, the next run hosted none and waited for ever.
 */
export async function workersPolling(keel: KeelClient, taskQueue = keel.taskQueue): Promise<boolean> {
  const response = await keel.temporal.workflowService.describeTaskQueue({
    namespace: keel.temporal.options.namespace,
    taskQueue: { name: taskQueue },
  });
  for (const poller of response.pollers ?? []) if (!(await endedHere(poller.identity))) return true;
  return false;
}

/** Whether a poller's identity names a process of this machine that no longer runs (the SDK's `<pid>@<host>`). */
async function endedHere(identity: string | null | undefined): Promise<boolean> {
  const named = /^(\d+)@(.+)$/u.exec(identity ?? '');
  if (named === null || named[2] !== hostname()) return false;
  return (await processIdentity(Number(named[1]))) === undefined;
}

/** The cluster for commands that only look at runs: never starts a server. */
export function existingTarget(out: Output): Promise<TemporalTarget> {
  return resolveTarget({ dataDirectory: dataDirectory(), say: out.note, start: false });
}
