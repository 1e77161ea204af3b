import { ApplicationFailure, condition, log, setHandler } from '@temporalio/workflow';
import { jsonBytes } from '../contract/payload.js';
import type {
  StreamEvent,
  StreamItem,
  StreamPublish,
  StreamRead,
  StreamReadArgs,
  StreamWait,
  StreamWaitArgs,
} from '../contract/stream-event.js';
import { STREAM_READ_LIMIT } from '../contract/stream-names.js';
import { check, checked } from './check.js';
import { STREAM_PUBLISH, STREAM_READ_ARGS, STREAM_WAIT_ARGS } from './input-plans.js';
import type { CarriedStream } from './schemas.js';
import { streamPublishSignal, streamReadQuery, streamWaitUpdate } from './stream-messages.js';

/**
 * Marks the executions that stream: their model turns publish events and they answer the stream's
 * query and update. Histories from before it replay as they ran, with no stream.
 */
export const STREAM_PATCH = 'keel-stream';

/**
 * Marks the executions whose model turns stream live from the worker, out of history: the log gets
 * each turn's `turn_start` and, once the turn is done, its whole text and call starts, and no
 * publish signal. Executions from before it replay with the text published into the log.
 */
export const LIVE_STREAM_PATCH = 'keel-stream-live';

/**
 * Most bytes of events the log keeps in memory: at each turn's end the oldest beyond it are dropped,
 * so the log never grows with the run, and a subscriber that far behind sees a gap. Bytes, not
 * turns: a subscriber handing over across continue-as-new may fall a few short turns behind.
 */
export const STREAM_LOG_BYTES = 128_000;

/** Most bytes of the newest events carried across continue-as-new (inside one payload with the rest). */
export const STREAM_CARRIED_BYTES = 64_000;

/** The attempt of the open turn whose batches are taken. */
interface TurnAttempt {
  turn: number;
  attempt: number;
  sequence: number;
  /** Whether this attempt has put anything in the log (a later one must then reset the turn). */
  published: boolean;
}

/**
 * A run's stream: an append-only, offset-addressed log in workflow memory, built from the publish
 * signals in history and the workflow's own events, so replay rebuilds it exactly. It keeps the
 * newest {@link STREAM_LOG_BYTES}; readers ask for offsets.
 */
export class StreamLog {
  private items: StreamItem[];
  private bytes: number;
  private open: TurnAttempt | undefined;
  /** The offset of the open turn's `turn_start`, when its text streams live. */
  private openOffset: number | undefined;
  /** The offset of the open turn's `turn_start`: truncation keeps the newest turn whole. */
  private turnFirst: number | undefined;
  private closing = false;
  private nextOffset: number;

  /**
   * @param live whether model turns stream live from the worker (see {@link LIVE_STREAM_PATCH}): the
   *   log then keeps each turn's text once it is done, and takes no publish signal.
   */
  constructor(
    carried?: CarriedStream,
    readonly live = false,
  ) {
    this.items = [...(carried?.items ?? [])];
    this.bytes = this.items.reduce((sum, item) => sum + jsonBytes(item), 0);
    this.nextOffset = carried?.head ?? 0;
  }

  /** The offset the next event gets. */
  get head(): number {
    return this.nextOffset;
  }

  /** The oldest offset kept. */
  get base(): number {
    return this.items[0]?.offset ?? this.nextOffset;
  }

  /** Sets the signal, query and update handlers. */
  listen(): void {
    setHandler(streamPublishSignal, (raw) => this.take(raw));
    setHandler(streamReadQuery, (raw) => this.read(raw));
    setHandler(streamWaitUpdate, (raw) => this.wait(raw), {
      validator: (raw) => {
        checked<StreamWaitArgs>(STREAM_WAIT_ARGS, raw);
        // Refused, not accepted: an accepted wait would hold up continue-as-new or the run's end.
        if (this.closing) {
          throw ApplicationFailure.create({
            type: 'KeelError.StreamClosing',
            message: 'This execution is ending or continuing as new: wait again on the run.',
            nonRetryable: true,
          });
        }
      },
      description: 'Waits until the stream has an event after `after`; answers the head offset.',
    });
  }

  /**
   * A turn starts: batches for it are taken from now on, or, live, its `turn_start` marks it, and
   * readers are told it streams live unless `streamed` is false (the run asked for no streaming).
   */
  openTurn(turn: number, streamed = true): void {
    if (this.live) {
      this.turnFirst = this.nextOffset;
      if (streamed) this.openOffset = this.nextOffset;
      this.append({ type: 'turn_start', turn });
    }
    this.open = { turn, attempt: 0, sequence: 0, published: false };
  }

  /**
   * The turn's model call returned: its text is final, late batches of it are dropped. Live, the
   * log gets the turn's whole text and its call starts here, for readers who did not follow it live.
   */
  endTurn(turn: number, done?: { text: string; calls: readonly { callId: string; name: string }[] }): void {
    this.open = undefined;
    this.openOffset = undefined;
    if (this.live && done !== undefined) {
      if (done.text !== '') this.append({ type: 'text', turn, delta: done.text });
      for (const { callId, name } of done.calls) this.append({ type: 'tool_call', turn, callId, name });
    }
    this.append({ type: 'turn_end', turn });
    this.truncate(this.turnFirst);
    this.turnFirst = undefined;
  }

  /** The turn's model call failed for good: what it streamed is void. */
  failTurn(turn: number): void {
    // Live, the log cannot know what a reader was shown: the reset always comes.
    const published = this.live || this.open?.published === true;
    this.open = undefined;
    this.openOffset = undefined;
    this.turnFirst = undefined;
    if (published) this.append({ type: 'reset', turn, reason: 'failed' });
  }

  /** Appends an event the workflow itself knows (observations, the end). */
  append(event: StreamEvent): void {
    const item = { offset: this.nextOffset, event };
    this.nextOffset += 1;
    this.items.push(item);
    this.bytes += jsonBytes(item);
  }

  /** Releases waiting subscribers and refuses new waits: the execution ends or continues as new. */
  close(): void {
    this.closing = true;
  }

  /** What the next execution continues from. */
  carry(): CarriedStream {
    let start = this.items.length;
    let bytes = 0;
    while (start > 0 && bytes + jsonBytes(this.items[start - 1]) <= STREAM_CARRIED_BYTES) {
      start -= 1;
      bytes += jsonBytes(this.items[start]);
    }
    return { head: this.nextOffset, items: this.items.slice(start) };
  }

  /**
   * One batch from a model-turn attempt. Batches of a turn that is not open (late ones from an attempt
   * that died) and of an earlier attempt are dropped; the first batch of a later attempt resets the
   * turn if an earlier attempt had published.
   */
  private take(raw: unknown): void {
    const parsed = check<StreamPublish>(STREAM_PUBLISH, raw);
    if (!parsed.success) {
      log.warn('Dropped a malformed stream batch');
      return;
    }
    const batch = parsed.data;
    // A live execution's turns publish no batches; one from elsewhere has no place in its log.
    if (this.live) return;
    const open = this.open;
    if (open === undefined || open.turn !== batch.turn || batch.attempt < open.attempt) return;
    if (batch.attempt > open.attempt) {
      if (open.published) this.append({ type: 'reset', turn: open.turn, reason: 'retried' });
      this.open = { turn: open.turn, attempt: batch.attempt, sequence: 0, published: false };
    }
    const current = this.open!;
    if (batch.sequence <= current.sequence) return;
    current.sequence = batch.sequence;
    for (const event of batch.events) {
      // The attempt says which turn it is in; a batch cannot speak for another turn.
      this.append({ ...event, turn: current.turn });
      current.published = true;
    }
  }

  private read(raw: unknown): StreamRead {
    const { from, limit } = checked<StreamReadArgs>(STREAM_READ_ARGS, raw);
    const base = this.base;
    const start = Math.max(0, from - base);
    const count = Math.min(limit ?? STREAM_READ_LIMIT, STREAM_READ_LIMIT);
    const open =
      this.open !== undefined && this.openOffset !== undefined
        ? { open: { turn: this.open.turn, offset: this.openOffset } }
        : {};
    return { base, head: this.nextOffset, items: this.items.slice(start, start + count), ...open };
  }

  private async wait(raw: unknown): Promise<StreamWait> {
    const { after } = checked<StreamWaitArgs>(STREAM_WAIT_ARGS, raw);
    await condition(() => this.closing || this.nextOffset - 1 > after);
    return { head: this.nextOffset, closing: this.closing };
  }

  /**
   * Drops the oldest events while the log is over {@link STREAM_LOG_BYTES}; the newest always stays,
   * and so do the events from `keepFrom` on (the turn that just ended, however long its text).
   */
  private truncate(keepFrom?: number): void {
    let drop = 0;
    let bytes = this.bytes;
    while (
      bytes > STREAM_LOG_BYTES &&
      this.items.length - drop > 1 &&
      (keepFrom === undefined || this.items[drop]!.offset < keepFrom)
    ) {
      bytes -= jsonBytes(this.items[drop]);
      drop += 1;
    }
    if (drop === 0) return;
    this.items = this.items.slice(drop);
    this.bytes = bytes;
  }
}
