import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { HistoryEvent } from './history.js';

const { EventType } = proto.temporal.api.enums.v1;

/** How a run ended, read from its history. */
export interface Settled {
  /** `COMPLETED`, `FAILED`, `CANCELED`, … as Temporal reports it. */
  status: string;
  events: HistoryEvent[];
  /** Milliseconds from the start event to the close event, by the server's clock. */
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
 * Waits until the run (this execution, not its continuations) closes, and throws as soon as its
 * history shows a failed workflow task: Temporal retries such a task for ever, so waiting longer
 * would only hide it. Polls the history, an observable condition; the test's timeout bounds it.
 */
export async function settle(client: Client, workflowId: string, runId?: string): Promise<Settled> {
  const handle = client.workflow.getHandle(workflowId, runId);
  for (;;) {
    const events = (await handle.fetchHistory()).events ?? [];
    const failedTask = events.find((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
    if (failedTask !== undefined) {
      const failure = failedTask.workflowTaskFailedEventAttributes?.failure;
      throw new WedgedRunError(`Run ${workflowId} has a failed workflow task: ${failure?.message ?? '?'}`);
    }
    const close = events.at(-1);
    const status = close === undefined ? undefined : closeStatus(close);
    if (close !== undefined && status !== undefined) {
      const failure = close.workflowExecutionFailedEventAttributes?.failure;
      return {
        status,
        events,
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
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Whether the history so far holds a failed workflow task. */
export function hasFailedWorkflowTask(events: readonly HistoryEvent[]): boolean {
  return events.some((event) => event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
}

function closeStatus(event: HistoryEvent): string | undefined {
  switch (event.eventType) {
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED:
      return 'COMPLETED';
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED:
      return 'FAILED';
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED:
      return 'CANCELED';
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED:
      return 'TERMINATED';
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT:
      return 'TIMED_OUT';
    case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
      return 'CONTINUED_AS_NEW';
    default:
      return undefined;
  }
}

function millis(event: HistoryEvent): number {
  const time = event.eventTime;
  if (time === null || time === undefined) return 0;
  return Number(time.seconds ?? 0) * 1000 + Math.floor((time.nanos ?? 0) / 1e6);
}
