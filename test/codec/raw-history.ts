import type { Client } from '@temporalio/client';
import { historyJson } from '../support/history.js';

/** A payload as proto-JSON shows it: base64 metadata values and data. */
interface JsonPayload {
  metadata?: Record<string, string>;
  data?: string;
}

/** Every payload of a run's history as the server stores it, with where it sits (a JSON path). */
export async function rawPayloads(
  client: Client,
  runId: string,
): Promise<{ json: string; payloads: Array<{ at: string; payload: JsonPayload }> }> {
  const json = await historyJson(client, runId);
  const payloads: Array<{ at: string; payload: JsonPayload }> = [];
  const walk = (value: unknown, at: string): void => {
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${at}[${index}]`));
    else if (typeof value === 'object' && value !== null) {
      const record = value as Record<string, unknown>;
      const metadata = record.metadata as Record<string, unknown> | undefined;
      if (typeof metadata === 'object' && metadata !== null && typeof metadata.encoding === 'string') {
        payloads.push({ at, payload: record });
        return;
      }
      for (const [key, item] of Object.entries(record)) walk(item, `${at}.${key}`);
    }
  };
  walk(JSON.parse(json), '$');
  return { json, payloads };
}

/** A base64 value as text (a payload's data or metadata value). */
export const base64Text = (value: string | undefined): string =>
  Buffer.from(value ?? '', 'base64').toString('utf8');
