import type { Context } from '@temporalio/activity';
import type { Logger } from '../logger.js';
import { StreamPublisher } from '../stream/publisher.js';

/**
 * The publisher of one model-turn attempt, to the run that scheduled it. Streaming is best effort:
 * a batch that cannot be delivered is logged, and the turn goes on (its result is what counts).
 */
export function turnPublisher(
  context: Context,
  turn: number,
  logger: () => Logger,
): StreamPublisher | undefined {
  const execution = context.info.workflowExecution;
  if (execution === undefined) return undefined;
  let warned = false;
  return new StreamPublisher({
    client: context.client,
    workflowId: execution.workflowId,
    runId: execution.runId,
    turn,
    attempt: context.info.attempt,
    onError: (error) => {
      if (warned) return;
      warned = true;
      logger().warn(`Could not stream turn ${turn} to its run`, { error });
    },
  });
}
