import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { KeelClient } from '../../src/client.js';
import type { RunState } from '../../src/contract/run-state.js';
import type { HistoryEvent } from './history.js';

/**
 * Polls the run's state query until `ready` holds and returns that state: waiting on an observable
 * condition, not on time. The test's own timeout bounds it.
 */
export async function waitForState(
  keel: KeelClient,
  runId: string,
  ready: (state: RunState) => boolean,
): Promise<RunState> {
  for (;;) {
    try {
      const state = await keel.getRunState(runId);
      if (ready(state)) return state;
    } catch {
      // Between two executions of a continued run the query may briefly find no open run.
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One workflow execution of a run's continue-as-new chain. */
export interface Execution {
  runId: string;
  events: HistoryEvent[];
  /** Bytes of the execution's history as protobuf, what Temporal counts against its limits. */
  bytes: number;
}

/**
 * Every execution of a run, first to last, by walking back from the latest through each start
 * event's `continuedExecutionRunId`.
 */
export async function executionChain(client: Client, workflowId: string): Promise<Execution[]> {
  const chain: Execution[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    const history: proto.temporal.api.history.v1.IHistory = await client.workflow
      .getHandle(workflowId, runId)
      .fetchHistory();
    const events: HistoryEvent[] = history.events ?? [];
    const bytes = proto.temporal.api.history.v1.History.encode(history).finish().length;
    chain.unshift({ runId, events, bytes });
    runId = events[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
  }
  return chain;
}
