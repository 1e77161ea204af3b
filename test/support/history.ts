import type { Client, WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

/** One event of a workflow history, as the client returns it. */
export type HistoryEvent = NonNullable<Awaited<ReturnType<WorkflowHandle['fetchHistory']>>['events']>[number];

/** The run's full history as proto-JSON text (what `temporal workflow show --output json` prints). */
export async function historyJson(client: Client, runId: string): Promise<string> {
  return historyToJSON(await client.workflow.getHandle(runId).fetchHistory());
}

/**
 * The run's history as readable text: proto-JSON with every payload's base64 `data` (and metadata)
 * decoded, so a search for a secret or an id also finds it inside inputs, results and failures.
 */
export async function historyText(client: Client, runId: string): Promise<string> {
  return JSON.stringify(decodePayloads(JSON.parse(await historyJson(client, runId))), null, 1);
}

function decodePayloads(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodePayloads);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if (typeof record.data === 'string' && typeof record.metadata === 'object' && record.metadata !== null) {
    const metadata = Object.fromEntries(
      Object.entries(record.metadata as Record<string, string>).map(([key, encoded]) => [
        key,
        decode(encoded),
      ]),
    );
    return { metadata, data: decode(record.data) };
  }
  return Object.fromEntries(Object.entries(record).map(([key, child]) => [key, decodePayloads(child)]));
}

function decode(base64: string): string {
  return Buffer.from(base64, 'base64').toString('utf8');
}

/** The run's history events. */
export async function historyEvents(client: Client, runId: string): Promise<HistoryEvent[]> {
  return (await client.workflow.getHandle(runId).fetchHistory()).events ?? [];
}
