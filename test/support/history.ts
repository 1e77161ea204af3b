import type { Client, WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

/** One event of a workflow history, as the client returns it. */
export type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** The run's full history as proto-JSON text (what `temporal workflow show --output json` prints). */
export async function historyJson(client: Client, runId: string): Promise<string> {
  return historyToJSON(await client.workflow.getHandle(runId).fetchHistory());
}

/** The run's history events. */
export async function historyEvents(client: Client, runId: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
}
