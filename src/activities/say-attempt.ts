import type { Context } from '@temporalio/activity';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { Client } from '@temporalio/client';
import type { ClientInterceptors, WorkflowClientInterceptor } from '@temporalio/client';
import { MODEL_ATTEMPT_REASON_CHARS, MODEL_ATTEMPT_SIGNAL } from '../contract/model-attempt.js';
import type { ModelAttempt } from '../contract/model-attempt.js';
import type { Logger } from '../logger.js';
import { attemptReason } from './attempt-reason.js';

/** Longest wait for Temporal to describe the run and take the signal; the turn goes on meanwhile. */
export const SAY_ATTEMPT_TIMEOUT_MS = 5_000;

/**
 * Tells the run that this model turn is being tried again (attempt 2 or later): which attempt of
 * how many and why the last one failed, both as the server keeps them on the pending activity. The
 * run shows it in its state query and current details until the turn ends. Costs a describe and a
 * signal (one history event) per retry, none on a first attempt. Best effort: a failure is logged,
 * never the turn's.
 */
export async function sayAttempt(
  context: Context,
  turn: number,
  clean: (text: string) => string,
  logger: () => Logger,
): Promise<void> {
  const { attempt, activityId, workflowExecution: execution } = context.info;
  if (attempt < 2 || execution === undefined) return;
  try {
    const client = await tracedClient(context.client);
    const handle = client.workflow.getHandle(execution.workflowId, execution.runId);
    await client.withDeadline(Date.now() + SAY_ATTEMPT_TIMEOUT_MS, async () => {
      const { raw } = await handle.describe();
      const pending = raw.pendingActivities?.find((activity) => activity.activityId === activityId);
      const reason = clean(attemptReason(pending?.lastFailure)).slice(0, MODEL_ATTEMPT_REASON_CHARS);
      const said: ModelAttempt = {
        turn,
        attempt,
        maxAttempts: pending?.maximumAttempts ? pending.maximumAttempts : null,
        reason,
      };
      await handle.signal(MODEL_ATTEMPT_SIGNAL, said);
    });
  } catch (error) {
    logger().warn(
      `Could not tell run ${execution.workflowId} that model turn ${turn} is on attempt ${attempt}`,
      {
        error,
      },
    );
  }
}

/**
 * The worker's client; while the attempt is traced, one that also carries its trace context in the
 * signal's headers, so the run's span for the signal is part of the run's trace, not one of its own.
 * Untraced, no header is added (history stays as lean as before).
 */
async function tracedClient(worker: Client): Promise<Client> {
  const active = trace.getActiveSpan()?.spanContext();
  if (active === undefined || !isSpanContextValid(active)) return worker;
  const { namespace, identity, dataConverter, interceptors } = worker.options;
  // Loaded only while traced: tracing is off by default, and a worker without it does not load it.
  const { OpenTelemetryWorkflowClientInterceptor } = await import('@temporalio/interceptors-opentelemetry');
  return new Client({
    connection: worker.connection,
    namespace,
    identity,
    ...(dataConverter !== undefined ? { dataConverter } : {}),
    interceptors: {
      ...interceptors,
      workflow: withTracing(interceptors.workflow, new OpenTelemetryWorkflowClientInterceptor()),
    },
  });
}

/** The worker's workflow client interceptors and the one that puts the trace context in headers. */
function withTracing(
  workflow: ClientInterceptors['workflow'],
  tracing: WorkflowClientInterceptor,
): ClientInterceptors['workflow'] {
  if (workflow === undefined) return [tracing];
  // The deprecated factory form cannot take another: the signal goes without the trace context.
  return Array.isArray(workflow) ? [...workflow, tracing] : workflow;
}
