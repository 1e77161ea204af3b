import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';

const { EventType, PendingActivityState, PendingWorkflowTaskState } = proto.temporal.api.enums.v1;

/** How many of a run's last history events a report shows. */
const LAST_EVENTS = 12;

/**
 * What the server knows of every run on `taskQueue`, for a failing test to print: each run's status,
 * its pending workflow task and activities (attempt, state, last failure) and its last history
 * events. A test that timed out waiting shows where the run stood, not only what the screen said.
 * Never throws: a report that cannot be made says why.
 */
export async function reportRuns(client: Client, taskQueue: string): Promise<string> {
  const lines: string[] = [];
  try {
    for await (const run of client.workflow.list({ query: `TaskQueue = '${taskQueue}'` })) {
      const handle = client.workflow.getHandle(run.workflowId, run.runId);
      const { raw, status } = await handle.describe();
      lines.push(
        `${run.workflowId} (${run.type}): ${status.name}, ${String(raw.workflowExecutionInfo?.historyLength ?? '?')} events`,
      );
      const task = raw.pendingWorkflowTask;
      if (task)
        lines.push(
          `  workflow task: ${name(PendingWorkflowTaskState, task.state)} attempt ${task.attempt ?? 1}, scheduled ${timestamp(task.scheduledTime)}, started ${timestamp(task.startedTime)}`,
        );
      for (const activity of raw.pendingActivities ?? [])
        lines.push(
          `  activity ${activity.activityType?.name ?? '?'} (${activity.activityId ?? '?'}): state ${name(PendingActivityState, activity.state)}, attempt ${activity.attempt ?? 1}, last heartbeat ${timestamp(activity.lastHeartbeatTime)}${activity.lastFailure?.message ? `, last failure: ${activity.lastFailure.message}` : ''}`,
        );
      const events = (await handle.fetchHistory()).events ?? [];
      for (const event of events.slice(-LAST_EVENTS))
        lines.push(
          `  #${String(event.eventId)} ${timestamp(event.eventTime)} ${name(EventType, event.eventType)}`,
        );
    }
  } catch (error) {
    lines.push(`(no report of the runs on ${taskQueue}: ${(error as Error).message})`);
  }
  return lines.length > 0 ? lines.join('\n') : `(no run on ${taskQueue})`;
}

type Timestamp =
  { seconds?: { toNumber(): number } | number | null; nanos?: number | null } | null | undefined;

function timestamp(value: Timestamp): string {
  if (!value?.seconds) return '-';
  const seconds = typeof value.seconds === 'number' ? value.seconds : value.seconds.toNumber();
  return new Date(seconds * 1000 + Math.floor((value.nanos ?? 0) / 1e6)).toISOString().slice(11, 23);
}

/** An enum value's name without its type's prefix: `ACTIVITY_TASK_STARTED`, not 6. */
function name(values: Record<number, string>, value: number | null | undefined): string {
  const found = value === null || value === undefined ? undefined : values[value];
  return (
    found?.replace(/^(EVENT_TYPE|PENDING_ACTIVITY_STATE|PENDING_WORKFLOW_TASK_STATE)_/u, '') ?? String(value)
  );
}
