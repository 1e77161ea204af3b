import type { Client } from '@temporalio/client';
import type { LoadedDataConverter } from '@temporalio/common';
import {
  extstoreInboundOptions,
  visit,
  walkGetWorkflowExecutionHistoryResponse,
} from '@temporalio/common/lib/internal-non-workflow/index.js';
import type proto from '@temporalio/proto';

/** One workflow execution's history, as the client's `fetchHistory` returns it. */
export type History = proto.temporal.api.history.v1.IHistory;

/** One execution of a run's continue-as-new chain, with its history. */
export interface RunExecution {
  /** Temporal's run id of this execution (the Keel run id is the workflow id of them all). */
  executionRunId: string;
  history: History;
}

/**
 * Every execution of the run, first to last: walks back from the newest execution through each
 * start event's `continuedExecutionRunId` (an id reused by a later, fresh run starts a new chain,
 * whose first execution continues nothing). Payloads come back as the server holds them.
 */
export async function runExecutions(client: Client, runId: string): Promise<RunExecution[]> {
  const chain: RunExecution[] = [];
  // describe() first: a missing run is a WorkflowNotFoundError, not an empty history.
  let executionRunId: string | undefined = (await client.workflow.getHandle(runId).describe()).runId;
  while (executionRunId) {
    const history = await client.workflow.getHandle(runId, executionRunId).fetchHistory();
    chain.unshift({ executionRunId, history });
    executionRunId =
      history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return chain;
}

/**
 * Replaces every reference to an externally stored payload (KEEL_PAYLOAD_STORE) by the payload, in
 * place, from the converter's store: `fetchHistory` leaves them as references. With no store
 * configured, a reference fails loudly rather than reading as an empty value.
 */
export async function inlineStoredPayloads(history: History, converter: LoadedDataConverter): Promise<void> {
  await visit(
    { history },
    walkGetWorkflowExecutionHistoryResponse,
    extstoreInboundOptions(converter.externalStorage),
  );
}
