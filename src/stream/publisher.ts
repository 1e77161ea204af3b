import type { Client } from '@temporalio/client';
import { STREAM_NAMES } from '../contract/stream-event.js';
import type { PublishedEvent, StreamPublish } from '../contract/stream-event.js';

/** How long text deltas gather before they go out as one signal: one history event per batch, not per token. */
export const STREAM_BATCH_MS = 50;

/** Where a model-turn attempt publishes, and who it is. */
export interface PublisherTarget {
  client: Client;
  workflowId: string;
  runId: string;
  turn: number;
  attempt: number;
  /** Hears a batch that could not be delivered (the turn goes on: streaming is best effort). */
  onError?(error: unknown): void;
}

/**
 * Publishes one attempt's events to its run, batched: the first event of a batch starts a
 * {@link STREAM_BATCH_MS} timer, a call start flushes at once. Signals go one at a time, in order,
 * each numbered so a signal delivered twice is taken once. `close` waits for everything to be
 * delivered: the activity returns only after its events are in history, before its result.
 */
export class StreamPublisher {
  private pending: PublishedEvent[] = [];
  private sequence = 0;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> = Promise.resolve();

  constructor(private readonly target: PublisherTarget) {}

  /** Adds a piece of the turn's text. */
  text(delta: string): void {
    if (delta === '') return;
    const last = this.pending.at(-1);
    // Deltas of one batch travel as one: fewer bytes in history than one event per token.
    if (last?.type === 'text') last.delta += delta;
    else this.pending.push({ type: 'text', turn: this.target.turn, delta });
    this.timer ??= setTimeout(() => this.flush(), STREAM_BATCH_MS);
  }

  /** Announces a call the model started writing. */
  toolCall(callId: string, name: string): void {
    this.pending.push({ type: 'tool_call', turn: this.target.turn, callId, name });
    this.flush();
  }

  /** Sends what is pending now (without waiting for it). */
  flush(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending.length === 0) return;
    const batch: StreamPublish = {
      turn: this.target.turn,
      attempt: this.target.attempt,
      sequence: (this.sequence += 1),
      events: this.pending.splice(0),
    };
    this.sending = this.sending.then(() => this.send(batch));
  }

  /** Sends what is pending and waits until every batch was delivered or given up. */
  async close(): Promise<void> {
    this.flush();
    await this.sending;
  }

  private async send(batch: StreamPublish): Promise<void> {
    const { client, workflowId, runId } = this.target;
    try {
      await client.workflow.getHandle(workflowId, runId).signal(STREAM_NAMES.publish, batch);
    } catch (error) {
      this.target.onError?.(error);
    }
  }
}
