import { WorkflowNotFoundError } from '@temporalio/common';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import type { KeelClient } from '../client.js';
import { hasEnded } from './ended-run.js';

/** A run that `keel run --id <id>` finds under that id already. */
export interface ExistingRun {
  description: WorkflowExecutionDescription;
  ended: boolean;
  /** The task it was started with (from its first event), when that can be read. */
  task: string | undefined;
}

/**
 * The run with this id, if there is one: a run id names one run, so `keel run --id` must not
 * announce "started" for a run that was there before (a start with a business key returns it).
 */
export async function existingRun(keel: KeelClient, runId: string): Promise<ExistingRun | undefined> {
  const handle = keel.temporal.workflow.getHandle(runId);
  let description: WorkflowExecutionDescription;
  try {
    description = await handle.describe();
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return undefined;
    throw error;
  }
  return { description, ended: hasEnded(description), task: await startedTask(keel, description) };
}

/**
 * The task of the run's first execution (a run that continued as new keeps it). Read from the
 * first event of the first execution, as the workflow got it.
 */
async function startedTask(
  keel: KeelClient,
  description: WorkflowExecutionDescription,
): Promise<string | undefined> {
  const first = description.raw.workflowExecutionInfo?.firstRunId || description.runId;
  const history = await keel.temporal.workflow.getHandle(description.workflowId, first).fetchHistory();
  const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return undefined;
  const input = keel.temporal.options.loadedDataConverter.payloadConverter.fromPayload<unknown>(payload);
  const task = (input as { task?: unknown } | null)?.task;
  return typeof task === 'string' ? task : undefined;
}
