import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { HistoryEvent } from './history.js';

const { EventType } = proto.temporal.api.enums.v1;

/** How a run ended, read from its history. */
export interface Settled {
  /** `COMPLETED`, `FAILED`, `CANCELED`, … as Temporal reports it. */
  status: string;
  events: HistoryEvent[];
  /** Workflow executions of the run: more than one when it continued as new. */
  executions: number;
  /** Milliseconds from the start event to the close event of the last execution, by the server's clock. */
  closedAfterMs: number;
  /** The failure's type when the run failed with an application failure. */
  failureType?: string;
  failureNonRetryable?: boolean;
  failureMessage?: string;
}

/** Thrown as soon as a run's history holds a failed workflow task: such a run is wedged. */
export class WedgedRunError extends Error {
  override name = 'WedgedRunError';
}

/**
 * Waits until the run closes, following continue-as-new to its last execution, and throws as soon as
 * a history shows a failed workflow task: Temporal retries such a task for ever, so waiting longer
 * would only hide it. `whileOpen` runs after each look at an open run (to cancel a session that
 * idles, say); give `firstRunId` to count the executions of a run that continues as new. Polls the history, an observable condition; the test's timeout bounds it.
 */
export async function settle(
  client: Client,
  workflowId: string,
  options: { firstRunId?: string; whileOpen?: (events: HistoryEvent[]) => Promise<void> } = {},
): Promise<Settled> {
  const { firstRunId, whileOpen } = options;
  // From the first execution when known: the latest one may already be a continuation.
  let handle = client.workflow.getHandle(workflowId, firstRunId);
  let executions = 1;
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    const failedTask = events.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
    if (failedTask !== undefined) {
      const failure = failedTask.workflowTaskFailedEventAttributes?.failure;
      throw new WedgedRunError(`Run ${workflowId} has a failed workflow task: ${failure?.message ?? '?'}`);
    }
    const close = events.at(-1);
    const status = close === undefined ? undefined : closeStatus(close);
    const next = close?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId;
    if (status === 'CONTINUED_AS_NEW' && typeof next === 'string') {
      handle = client.workflow.getHandle(workflowId, next);
      executions += 1;
      continue;
    }
    if (close !== undefined && status !== undefined) {
      const failure = close.workflowExecutionFailedEventAttributes?.failure;
      return {
        status,
        events,
        executions,
        closedAfterMs: millis(close) - millis(events[0]!),
        ...(failure?.applicationFailureInfo
          ? {
              failureType: failure.applicationFailureInfo.type ?? '',
              failureNonRetryable: failure.applicationFailureInfo.nonRetryable === true,
            }
          : {}),
        ...(failure?.message ? { failureMessage: failure.message } : {}),
      };
    }
    await whileOpen?.(events);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Whether a workflow task of the run has completed. Until then the server holds a query back
 * (for as long as the task keeps failing, too), so only then is a query safe to send.
 */
export function hasCompletedWorkflowTask(events: readonly HistoryEvent[]): boolean {
  return events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED);
}

/** The run's status for each event that closes an execution. */
const CLOSE_STATUS = new Map<number, string>([
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, 'COMPLETED'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, 'FAILED'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED, 'CANCELED'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, 'TERMINATED'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT, 'TIMED_OUT'],
  [EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, 'CONTINUED_AS_NEW'],
]);

function closeStatus(event: HistoryEvent): string | undefined {
  return event.eventType === null || event.eventType === undefined
    ? undefined
    : CLOSE_STATUS.get(event.eventType);
}

function millis(event: HistoryEvent): number {
  const time = event.eventTime;
  if (time === null || time === undefined) return 0;
  return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}
