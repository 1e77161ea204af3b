import type { Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { Client, WorkflowExecutionStatusName } from '@temporalio/client';
import type { Logger } from '../logger.js';

/** Longest wait for Temporal to say whether the run still runs; the aborted turn waits on the answer. */
export const RUN_CHECK_TIMEOUT_MS = 5_000;

/** States of a run that is over: nothing will ever read its turn's response. */
const CLOSED = new Set<WorkflowExecutionStatusName>([
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TERMINATED',
  'CONTINUED_AS_NEW',
  'TIMED_OUT',
]);

/**
 * Whether the run no longer wants this aborted turn, so its background response may be cancelled on
 * the model server. A cancelled run says so (`cancelRequested`). NOT_FOUND is ambiguous: Temporal
 * answers it to the heartbeat of a closed run (terminated, timed out, continued-as-new), but also to
 * that of an attempt that timed out while the run goes on, whose retry re-attaches to this very
 * response; cancelling it there would make the retry pay for a new generation. So on NOT_FOUND this
 * asks Temporal whether the run is still open. A worker shutdown or a pause is never "gone".
 */
export async function runIsGone(context: Context, logger: Logger): Promise<boolean> {
  const details = context.cancellationDetails;
  if (details?.cancelRequested === true) return true;
  if (details?.notFound !== true) return false;
  const execution = context.info.workflowExecution;
  const client = workerClient(context, logger);
  if (client === undefined || execution === undefined) return true;
  try {
    const { status } = await client.withDeadline(Date.now() + RUN_CHECK_TIMEOUT_MS, () =>
      client.workflow.getHandle(execution.workflowId, execution.runId).describe(),
    );
    if (CLOSED.has(status.name)) return true;
    logger.warn(
      `This attempt of the turn timed out while run ${execution.workflowId} is ${status.name}: ` +
        'leaving its background response to the retry',
    );
    return false;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return true;
    // Not knowing, leave the response running. Wrongly cancelling it costs a whole new generation for
    // a run that goes on (the common case: timed-out attempts far outnumber runs ended by terminate or
    // timeout); wrongly keeping it costs only the rest of one generation nobody reads, bounded by
    // the turn's output limit. A cancelled run is not at stake: its cancel is `cancelRequested`.
    logger.warn(
      `Could not tell whether run ${execution.workflowId} is still running; leaving its background response running`,
      { error },
    );
    return false;
  }
}

/** The worker's Temporal client, which only an activity run outside a worker (a mock environment) lacks. */
function workerClient(context: Context, logger: Logger): Client | undefined {
  try {
    return context.client;
  } catch (error) {
    // Without a client there is no telling a closed run from a timed-out attempt: keep the old rule.
    logger.warn(
      'No Temporal client to tell a closed run from a timed-out attempt; treating the run as gone',
      {
        error,
      },
    );
    return undefined;
  }
}
