import { z } from 'zod';
import { ObservationError } from './observation.js';

/**
 * What a run streams to its callers, in order: the model's text as it is written, the calls it
 * starts, the observations of those calls, and the turn and run boundaries. A `reset` says the
 * turn's attempt so far is void (its attempt died and the turn runs again): a caller drops the
 * turn's text it has shown and takes the turn again from the events that follow.
 */
export const StreamEvent = z.discriminatedUnion('type', [
  z.object({
    /** A model turn starts; the live events of its text and call starts carry this event's offset. */
    type: z.literal('turn_start'),
    turn: z.number().int().positive(),
  }),
  z.object({
    type: z.literal('text'),
    turn: z.number().int().positive(),
    /** The next piece of the turn's text. */
    delta: z.string(),
  }),
  z.object({
    type: z.literal('tool_call'),
    turn: z.number().int().positive(),
    callId: z.string(),
    name: z.string(),
  }),
  z.object({
    type: z.literal('observation'),
    turn: z.number().int().positive(),
    callId: z.string(),
    name: z.string(),
    ok: z.boolean(),
    error: ObservationError.optional(),
    /** The start of the output or error message. */
    preview: z.string(),
  }),
  z.object({
    type: z.literal('reset'),
    turn: z.number().int().positive(),
    /** Why the turn starts again: `retried` (its attempt died) or `failed` (no attempt is left). */
    reason: z.enum(['retried', 'failed']),
  }),
  z.object({
    type: z.literal('turn_end'),
    turn: z.number().int().positive(),
  }),
  z.object({
    /**
     * Made by the reader, never stored: events `from` to `to` (exclusive) were truncated before it got
     * them (it fell more than a turn behind); the turn they belong to is incomplete.
     */
    type: z.literal('gap'),
    from: z.number().int().nonnegative(),
    to: z.number().int().nonnegative(),
  }),
  z.object({
    type: z.literal('end'),
    /** The run's status (`completed`, `failed`, `cancelled`, …); nothing follows. */
    status: z.string(),
  }),
]);
export type StreamEvent = z.infer<typeof StreamEvent>;

/** One event of a run's stream with its offset: offsets count from 0 over the whole run and never repeat. */
export const StreamItem = z.object({
  offset: z.number().int().nonnegative(),
  event: StreamEvent,
});
export type StreamItem = z.infer<typeof StreamItem>;

/** The events a model-turn attempt publishes itself (the workflow adds the others). */
export const PublishedEvent = z.discriminatedUnion('type', [StreamEvent.options[1], StreamEvent.options[2]]);
export type PublishedEvent = z.infer<typeof PublishedEvent>;

/** Argument of the `keel.stream.publish` signal: one batch of one attempt of one turn. */
export const StreamPublish = z.object({
  turn: z.number().int().positive(),
  /** The activity attempt (1, 2, …): a batch of a later attempt resets the turn; of an earlier one, is dropped. */
  attempt: z.number().int().positive(),
  /** 1, 2, … within the attempt: a batch delivered twice is taken once. */
  sequence: z.number().int().positive(),
  events: z.array(PublishedEvent).max(1_000),
});
export type StreamPublish = z.infer<typeof StreamPublish>;

/** Argument of the `keel.stream.read` query. */
export const StreamReadArgs = z.object({
  /** The first offset wanted. */
  from: z.number().int().nonnegative(),
  /** At most this many events (default and cap {@link STREAM_READ_LIMIT}). */
  limit: z.number().int().positive().optional(),
});
export type StreamReadArgs = z.infer<typeof StreamReadArgs>;

/** Answer of the `keel.stream.read` query. */
export const StreamRead = z.object({
  /** The oldest offset still kept; events before it were truncated. */
  base: z.number().int().nonnegative(),
  /** The offset the next event will get. */
  head: z.number().int().nonnegative(),
  items: z.array(StreamItem),
  /**
   * The model turn being written, when its text streams live from the worker running it (see
   * {@link LiveStream}) rather than through this log: its number and the offset of its `turn_start`.
   * Absent from runs of workers before live streaming.
   */
  open: z.object({ turn: z.number().int().positive(), offset: z.number().int().nonnegative() }).optional(),
});
export type StreamRead = z.infer<typeof StreamRead>;

/** Argument of the `keel.stream.wait` update: returns once the head is past `after`, or the run ends or hands over. */
export const StreamWaitArgs = z.object({ after: z.number().int().min(-1) });
export type StreamWaitArgs = z.infer<typeof StreamWaitArgs>;

/** Answer of the `keel.stream.wait` update: offsets only, so waiting adds no text to history. */
export const StreamWait = z.object({
  head: z.number().int().nonnegative(),
  /** The execution is about to continue as new (wait again: the next one answers) or has ended. */
  closing: z.boolean(),
});
export type StreamWait = z.infer<typeof StreamWait>;

export { STREAM_NAMES, STREAM_READ_LIMIT } from './stream-names.js';

/**
 * Where a model-turn attempt streams live, in the heartbeat details of its `callModel` activity (so
 * in no history event while it runs): a URL on the worker that runs it, unguessable, valid for this
 * attempt alone. `GET` it for {@link LiveLine}s, one JSON object per line.
 */
export const LiveStream = z.object({
  url: z.string().url(),
  turn: z.number().int().positive(),
});
export type LiveStream = z.infer<typeof LiveStream>;

/**
 * One line of a live attempt: an event (`index` counts the attempt's events from 0; `?from=<index>`
 * skips those before), then `done` once the model's answer is complete (`completed`) or the attempt
 * gave up (`failed`). A connection that closes without `done` means the attempt died. With the
 * worker's payload codec on (encryption), each event comes as `payload`: the event encoded as a
 * Temporal payload by that codec, in proto3 JSON.
 */
export const LiveLine = z.union([
  z.object({ index: z.number().int().nonnegative(), event: PublishedEvent }),
  z.object({ index: z.number().int().nonnegative(), payload: z.record(z.string(), z.unknown()) }),
  z.object({ done: z.enum(['completed', 'failed']) }),
]);
export type LiveLine = z.infer<typeof LiveLine>;
