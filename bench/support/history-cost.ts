import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import { eventName, historySize } from './history-timeline.js';

const { HistoryEvent } = proto.temporal.api.history.v1;

/** What one execution's history holds: its events, their proto-encoded bytes, and the kinds that streaming adds. */
export interface HistoryCost {
  events: number;
  /** Sum of each event's proto-encoded size, as `bench/stream.ts` counts. */
  bytes: number;
  /** The server's own count (`historySizeBytes`, what continue-as-new is suggested on). */
  serverBytes: number;
  /** `WorkflowTaskCompleted` events: workflow tasks the worker ran. */
  workflowTasks: number;
  /** `WorkflowExecutionSignaled` events. */
  signals: number;
  /** `WorkflowExecutionUpdateAccepted` events (a subscriber's long polls that reached history). */
  updates: number;
  /** `ActivityTaskScheduled` events. */
  activities: number;
}

/** The cost of the latest execution of workflow `workflowId` (one execution: no continue-as-new follows). */
export async function historyCost(client: Client, workflowId: string): Promise<HistoryCost> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const { bytes: serverBytes } = await historySize(client, workflowId);
  const cost: HistoryCost = {
    events: 0,
    bytes: 0,
    serverBytes,
    workflowTasks: 0,
    signals: 0,
    updates: 0,
    activities: 0,
  };
  for (const event of history.events ?? []) {
    cost.events += 1;
    cost.bytes += HistoryEvent.encode(event).finish().length;
    switch (eventName(event)) {
      case 'WorkflowTaskCompleted':
        cost.workflowTasks += 1;
        break;
      case 'WorkflowExecutionSignaled':
        cost.signals += 1;
        break;
      case 'WorkflowExecutionUpdateAccepted':
        cost.updates += 1;
        break;
      case 'ActivityTaskScheduled':
        cost.activities += 1;
        break;
      default:
        break;
    }
  }
  return cost;
}
