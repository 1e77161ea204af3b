import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { STREAM_NAMES, StreamRead, StreamWait } from '../contract/stream-event.js';
import type { StreamItem } from '../contract/stream-event.js';

/** A run that has no stream: started by a worker from before streaming. */
export class RunNotStreamingError extends Error {
  override name = 'RunNotStreamingError';
}

/** Options for {@link subscribe}. */
export interface SubscribeOptions {
  /** The first offset wanted (default 0): one past the last offset seen, to resume after a disconnect. */
  from?: number;
}

/** Pause before waiting again on a run that is handing over to its next execution. */
const HANDOVER_PAUSE_MS = 100;

/**
 * A run's stream from an offset, as an async iterator that ends after the run's `end` event. Reads
 * with the `keel.stream.read` query and long-polls with the `keel.stream.wait` update, always on the
 * run's current execution, so it follows continue-as-new. Events truncated before they were read
 * come as one `gap` event.
 */
export async function* subscribe(
  temporal: Client,
  runId: string,
  options: SubscribeOptions = {},
): AsyncGenerator<StreamItem, void, undefined> {
  let next = options.from ?? 0;
  for (;;) {
    const handle = temporal.workflow.getHandle(runId);
    const read = await readStream(temporal, runId, next);
    const first = read.items[0];
    if (first !== undefined && first.offset > next) {
      yield { offset: next, event: { type: 'gap', from: next, to: first.offset } };
    }
    for (const item of read.items) {
      yield item;
      next = item.offset + 1;
      if (item.event.type === 'end') return;
    }
    if (read.items.length > 0) continue;
    try {
      StreamWait.parse(await handle.executeUpdate(STREAM_NAMES.wait, { args: [{ after: next - 1 }] }));
    } catch (error) {
      // Refused (the execution is ending or continuing as new) or the execution closed meanwhile.
      const { status } = await handle.describe();
      if (status.name !== 'RUNNING') {
        const last = await readStream(temporal, runId, next);
        for (const item of last.items) yield item;
        return;
      }
      if (!isClosing(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, HANDOVER_PAUSE_MS));
    }
  }
}

async function readStream(temporal: Client, runId: string, from: number): Promise<StreamRead> {
  try {
    return StreamRead.parse(await temporal.workflow.getHandle(runId).query(STREAM_NAMES.read, { from }));
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) throw error;
    if (error instanceof Error && /unknown queryType|did not register a handler/i.test(error.message)) {
      throw new RunNotStreamingError(
        `Run ${runId} has no stream: it was started by a worker from before streaming.`,
        { cause: error },
      );
    }
    throw error;
  }
}

function isClosing(error: unknown): boolean {
  const cause = (error as { cause?: { type?: string } }).cause;
  return cause?.type === 'KeelError.StreamClosing';
}
