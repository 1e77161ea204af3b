import type { Context } from '@temporalio/activity';
import type { Logger } from '../logger.js';
import type { TurnSink } from '../model/stream-events.js';
import type { Sanitizer } from '../safety/sanitize.js';
import type { LiveTurn } from '../stream/live-hub.js';
import { StreamPublisher } from '../stream/publisher.js';

/** A turn's sink that publishes to its run; `close` sends the rest and waits for delivery. */
export interface TurnPublisher extends TurnSink {
  close(): Promise<void>;
}

/**
 * The publisher of one model-turn attempt, to the run that scheduled it. Its text is redacted before
 * it leaves the worker, as the turn's result is: an end of the text that could begin a secret waits
 * for the next delta, so a secret split across deltas is still caught. Streaming is best effort: a batch that cannot be delivered is logged, and the turn
 * goes on (its result is what counts).
 */
export function turnPublisher(
  context: Context,
  turn: number,
  sanitizer: Sanitizer,
  logger: () => Logger,
): TurnPublisher | undefined {
  const execution = context.info.workflowExecution;
  if (execution === undefined) return undefined;
  let warned = false;
  const publisher = new StreamPublisher({
    client: context.client,
    workflowId: execution.workflowId,
    runId: execution.runId,
    turn,
    attempt: context.info.attempt,
    onError: (error) => {
      if (warned) return;
      warned = true;
      logger().warn(`Could not stream turn ${turn} to its run`, { error });
    },
  });
  const redacted = redactingSink(publisher, sanitizer);
  return {
    ...redacted,
    async close() {
      redacted.flush();
      await publisher.close();
    },
  };
}

/**
 * The live publisher of one model-turn attempt, through the worker's live hub (out of history), its
 * text redacted as {@link turnPublisher}'s is. `close` ends the attempt for its subscribers.
 */
export function liveTurnPublisher(
  live: LiveTurn,
  sanitizer: Sanitizer,
): TurnPublisher & Pick<LiveTurn, 'stream' | 'end'> {
  // Nobody reading: the text is held back, unredacted, and redacted once a reader comes or the turn
  // ends, so an unwatched turn costs one redaction, not one per delta.
  const redacted = redactingSink(live, sanitizer, () => !live.watched());
  live.onReader(() => redacted.flush(false));
  return {
    ...redacted,
    stream: live.stream,
    end(outcome) {
      redacted.flush();
      live.end(outcome);
    },
    close() {
      redacted.flush();
      return Promise.resolve();
    },
  };
}

/**
 * Passes a turn's text to `target` redacted: an end of the text that could begin a secret waits
 * for the next delta (or `flush`), so a secret split across deltas is still caught.
 */
function redactingSink(
  target: Pick<TurnSink, 'text' | 'toolCall'>,
  sanitizer: Sanitizer,
  hold: () => boolean = () => false,
): Pick<TurnSink, 'text' | 'toolCall'> & { flush(all?: boolean): void } {
  let text = '';
  let sent = 0;
  const release = (all: boolean): void => {
    const settled = all ? text : text.slice(0, text.length - sanitizer.unsettled(text));
    const redacted = sanitizer.output(settled);
    const upTo = Math.max(sent, redacted.length);
    if (upTo > sent) target.text(redacted.slice(sent, upTo));
    sent = Math.max(sent, upTo);
  };
  return {
    text(delta) {
      text += delta;
      if (!hold()) release(false);
    },
    toolCall(callId, name) {
      release(true);
      target.toolCall(callId, name);
    },
    /** Passes on what is held: all of it, or (`all` false) what cannot begin a secret. */
    flush(all = true) {
      release(all);
    },
  };
}
