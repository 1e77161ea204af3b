/**
 * The streaming comparison built with Temporal's own `@temporalio/workflow-streams`: a run of model
 * turns (an activity that streams the model's deltas to the workflow's stream) and no-op tool calls
 * (an activity each), as Keel's run does, with the stream's turn ends and end published by the workflow.
 */
import { allHandlersFinished, condition, proxyActivities } from '@temporalio/workflow';
import { WorkflowStream } from '@temporalio/workflow-streams/workflow';
import type { createStreamActivities } from './activities.js';
import { EVENTS_TOPIC } from './events.js';
import type { StreamedEvent, StreamedRunInput } from './events.js';

type StreamActivities = ReturnType<typeof createStreamActivities>;

// Keel's defaults: a model turn may take minutes and heartbeats; a tool call 60 s plus 15 s grace.
const { streamTurn } = proxyActivities<StreamActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 5 },
});
const { noop } = proxyActivities<StreamActivities>({
  startToCloseTimeout: '75 seconds',
  retry: { maximumAttempts: 5 },
});

/** Runs `turns` streamed model turns with a no-op call after each but the last; returns the characters streamed. */
export async function workflowStreamsRun(input: StreamedRunInput): Promise<number> {
  const stream = new WorkflowStream();
  const events = stream.topic<StreamedEvent>(EVENTS_TOPIC);
  let characters = 0;
  for (let turn = 1; turn <= input.turns; turn++) {
    characters += await streamTurn({ ...input, turn });
    events.publish({ type: 'turn_end', turn });
    if (turn < input.turns) await noop({ size: 2 });
  }
  events.publish({ type: 'end' });
  // A subscriber's waiting poll is an update: let it return before the run completes.
  stream.detachPollers();
  await condition(allHandlersFinished);
  return characters;
}
