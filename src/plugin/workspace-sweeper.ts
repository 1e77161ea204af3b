import { Client, WorkflowNotFoundError } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { Logger } from '../logger.js';
import type { RunIsOpen, RunWorkspaces } from '../tools/run-workspaces.js';

/**
 * Whether a run is open, asked of Temporal: its workflow id's latest execution is still running. A
 * workflow the server no longer knows has ended; any other answer (the server unreachable) counts
 * as open, so a workspace is never removed on a guess.
 */
export function runIsOpenIn(connection: NativeConnection, namespace: string): RunIsOpen {
  const client = new Client({ connection, namespace });
  return async (workflowId) => {
    try {
      const description = await client.workflow.getHandle(workflowId).describe();
      return description.status.name === 'RUNNING';
    } catch (error) {
      return !(error instanceof WorkflowNotFoundError);
    }
  };
}

/** A sweep now and every `intervalSeconds` until stopped; a failed sweep is logged and tried again later. */
export function startSweeping(
  workspaces: RunWorkspaces,
  isOpen: RunIsOpen,
  intervalSeconds: number,
  logger: Pick<Logger, 'info' | 'warn'>,
): { stop(): Promise<void> } {
  let sweeping: Promise<void> | undefined;
  const sweep = (): void => {
    // One sweep at a time: a slow one (many ended runs) is not overtaken by the next.
    sweeping ??= workspaces
      .sweep(isOpen)
      .then(
        (removed) => {
          if (removed.length > 0) logger.info(`Removed the workspaces of ${removed.length} ended run(s)`);
        },
        (error: unknown) => logger.warn(`Sweeping the runs' workspaces failed: ${(error as Error).message}`),
      )
      .finally(() => {
        sweeping = undefined;
      });
  };
  sweep();
  const timer = setInterval(sweep, intervalSeconds * 1000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await sweeping;
    },
  };
}
