import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { ServiceError } from '@temporalio/client';
import { STREAM_NAMES, StreamRead } from '../contract/stream-event.js';
import type { StreamItem } from '../contract/stream-event.js';
import { lookAtRun, readLive } from './live-reader.js';
import type { LiveEnd, RunLook } from './live-reader.js';
import type { LiveStream } from '../contract/stream-event.js';

/** A run that has no stream: started by a worker from before streaming. */
export class RunNotStreamingError extends Error {
  override name = 'RunNotStreamingError';
}

/** Options for {@link subscribe}. */
export interface SubscribeOptions {
  /** The first offset wanted (default 0): one past the last offset seen, to resume after a disconnect. */
  from?: number;
}

/** Shortest and longest pause between two looks for a turn's live stream that has not begun (or died). */
const LIVE_LOOK_MIN_MS = 5;
const LIVE_LOOK_MAX_MS = 500;
/**
 * Times the log is read again when it shows no open turn but a look at the run finds the turn's
 * model attempt (the log was read first): pauses of 10, 20, 40, 80 and 160 ms.
 */
const STALE_READS = 5;
/** Pause before looking at the run again after a long poll of its history failed. */
const WAIT_RETRY_MS = 200;
/** Most events of history one page brings while catching up. */
const HISTORY_PAGE = 1_000;

/** What this reader has passed on of a turn since its last `reset`. */
interface Shown {
  /** Whether it came live from the worker (the log's copy of the turn then repeats it). */
  live: boolean;
  text: string;
  calls: Set<string>;
  /** The reader was resumed inside this turn: its caller may have shown part of it, so a `reset` comes first. */
  resumed?: boolean;
}

/** A turn whose attempt has started without a live stream is waited for in history after this long. */
const NO_LIVE_MS = 2_000;

/**
 * A run's stream from an offset, as an async iterator that ends after the run's `end` event. The
 * run's log (the `keel.stream.read` query, always on the run's current execution, so it follows
 * continue-as-new) has every turn's start and end, its observations and, once a turn is done, its
 * whole text; the text of the turn being written comes live from the worker that writes it (found
 * in its attempt's heartbeat), out of history. Between turns the reader waits on the run's history
 * (a long poll: nothing is written for it). Events truncated before they were read come as one
 * `gap` event. Live events carry the offset of their turn's `turn_start`, so resuming one past it
 * takes the turn again from its start.
 */
export async function* subscribe(
  temporal: Client,
  runId: string,
  options: SubscribeOptions = {},
): AsyncGenerator<StreamItem, void, undefined> {
  let next = options.from ?? 0;
  const shown = new Map<number, Shown>();
  // Resumed one past a turn's start (its live events carry that offset): the turn comes again from its start.
  if (next > 0) {
    const [before] = (await readStream(temporal, runId, next - 1)).items;
    if (before?.offset === next - 1 && before.event.type === 'turn_start') {
      shown.set(before.event.turn, { live: false, text: '', calls: new Set(), resumed: true });
    }
  }
  // Live attempts already read to their end (or found dead): never read twice.
  const followed = new Set<string>();
  const history = new HistoryWatch(temporal, runId);
  let pause = 0;
  let withoutLive: { attempt: number; since: number } | undefined;
  // Reads of the log that found no open turn while a look found a model attempt, at one history length.
  let stale: { historyLength: number; tries: number } | undefined;
  for (;;) {
    const read = await readStream(temporal, runId, next);
    const first = read.items[0];
    if (first !== undefined && first.offset > next) {
      yield { offset: next, event: { type: 'gap', from: next, to: first.offset } };
    }
    for (const item of read.items) {
      next = item.offset + 1;
      yield* sift(item, shown);
      if (item.event.type === 'end') return;
    }
    if (read.items.length > 0) continue;
    const open = read.open;
    const look = await lookAtRun(temporal, runId, open?.turn);
    if (open !== undefined && look.live !== undefined && !followed.has(look.live.url)) {
      followed.add(look.live.url);
      withoutLive = undefined;
      const end = yield* followLive(temporal, look.live, open.offset, shown);
      pause = 0;
      // Its result is on its way into history: wait for it there rather than looking again.
      if (end === 'completed') await history.wait(look);
      continue;
    }
    if (!look.running) {
      // Ended without an `end` (terminated, timed out): what is left in the log, then nothing.
      const last = await readStream(temporal, runId, next);
      for (const item of last.items) yield* sift(item, shown);
      return;
    }
    // A turn opened between the read and the look: read again. A look that finds the turn's attempt
    // but not yet its live stream says so too; waiting on history then would wait out the whole turn
    // (nothing is written there while it streams), so the log is read again a few times first.
    if (open === undefined && look.live !== undefined && !followed.has(look.live.url)) continue;
    if (open === undefined && look.modelPending) {
      const at: { historyLength: number; tries: number } =
        stale?.historyLength === look.historyLength ? stale : { historyLength: look.historyLength, tries: 0 };
      stale = at;
      if (at.tries < STALE_READS) {
        at.tries += 1;
        await new Promise((resolve) => setTimeout(resolve, LIVE_LOOK_MIN_MS * 2 ** at.tries));
        continue;
      }
    }
    if (open !== undefined) {
      // An attempt that runs and says nothing of a live stream streams none (its worker has
      // streaming off or cannot serve it): the turn's text comes with its end, waited for in history.
      const attempt = look.startedWithoutLive;
      if (attempt === undefined || withoutLive?.attempt !== attempt) {
        withoutLive = attempt === undefined ? undefined : { attempt, since: Date.now() };
      }
      if (withoutLive === undefined || Date.now() - withoutLive.since < NO_LIVE_MS) {
        // The turn's attempt has not begun streaming yet, or it died and the next has not begun.
        pause = Math.min(LIVE_LOOK_MAX_MS, Math.max(LIVE_LOOK_MIN_MS, pause * 2));
        await new Promise((resolve) => setTimeout(resolve, pause));
        continue;
      }
    }
    pause = 0;
    await history.wait(look);
  }
}

/**
 * Reads one live attempt of a turn: a `reset` first if this reader showed the turn already (an
 * earlier attempt), then its events. A dropped connection is tried once more from where it was.
 */
async function* followLive(
  temporal: Client,
  live: LiveStream,
  offset: number,
  shown: Map<number, Shown>,
): AsyncGenerator<StreamItem, LiveEnd, undefined> {
  const before = shown.get(live.turn);
  if (before !== undefined && (before.text !== '' || before.calls.size > 0 || before.resumed === true)) {
    yield { offset, event: { type: 'reset', turn: live.turn, reason: 'retried' } };
  }
  const turn: Shown = { live: true, text: '', calls: new Set() };
  shown.set(live.turn, turn);
  let from = 0;
  let end: LiveEnd = 'lost';
  for (let tries = 0; tries < 2 && end === 'lost'; tries++) {
    const reading = readLive(temporal, live, from);
    try {
      for (;;) {
        const step = await reading.next();
        if (step.done === true) {
          end = step.value;
          break;
        }
        const { index, event } = step.value;
        from = index + 1;
        if (event.type === 'text') turn.text += event.delta;
        else turn.calls.add(event.callId);
        yield { offset, event: { ...event, turn: live.turn } };
      }
    } finally {
      // A caller that stops reading closes the connection.
      await reading.return('lost');
    }
  }
  // The attempt died (or cannot be reached): what it showed is void; the turn comes again.
  if (end !== 'completed') {
    shown.delete(live.turn);
    if (turn.text !== '' || turn.calls.size > 0) {
      yield { offset, event: { type: 'reset', turn: live.turn, reason: 'retried' } };
    }
  }
  return end;
}

/**
 * An item of the log as this reader passes it on: a turn it followed live is in the log again once
 * done, so its text and calls are dropped, or only what was missed is passed (a `reset` first when
 * the log's text is not what was shown).
 */
function* sift(item: StreamItem, shown: Map<number, Shown>): Generator<StreamItem, void, undefined> {
  const { event, offset } = item;
  if ((event.type === 'text' || event.type === 'tool_call') && shown.get(event.turn)?.resumed === true) {
    shown.delete(event.turn);
    yield { offset, event: { type: 'reset', turn: event.turn, reason: 'retried' } };
  }
  if (event.type === 'text') {
    const turn = shown.get(event.turn);
    if (turn?.live !== true) {
      shown.set(event.turn, {
        live: false,
        text: (turn?.text ?? '') + event.delta,
        calls: turn?.calls ?? new Set(),
      });
      yield item;
      return;
    }
    turn.live = false;
    if (event.delta === turn.text) return;
    if (event.delta.startsWith(turn.text)) {
      const rest = event.delta.slice(turn.text.length);
      turn.text = event.delta;
      yield { offset, event: { ...event, delta: rest } };
      return;
    }
    yield { offset, event: { type: 'reset', turn: event.turn, reason: 'retried' } };
    shown.set(event.turn, { live: false, text: event.delta, calls: new Set() });
    yield item;
    return;
  }
  if (event.type === 'tool_call') {
    const turn = shown.get(event.turn);
    if (turn?.calls.has(event.callId) === true) return;
    if (turn === undefined) shown.set(event.turn, { live: false, text: '', calls: new Set([event.callId]) });
    else turn.calls.add(event.callId);
    yield item;
    return;
  }
  if (event.type === 'reset') {
    const turn = shown.get(event.turn);
    shown.delete(event.turn);
    // Nothing of the turn was shown by this reader (a reader resuming may have shown some: it gets it).
    if (turn !== undefined && turn.text === '' && turn.calls.size === 0 && turn.resumed !== true) return;
  }
  if (event.type === 'turn_end') shown.delete(event.turn);
  yield item;
}

/**
 * Waits on a run's history without adding to it: a long poll of the execution's events that returns
 * once there is an event past what a look at the run saw, or the execution closed.
 */
class HistoryWatch {
  private cursor: { runId: string; token: Uint8Array | undefined; seen: number } | undefined;

  constructor(
    private readonly temporal: Client,
    private readonly workflowId: string,
  ) {}

  async wait(look: RunLook): Promise<void> {
    if (this.cursor?.runId !== look.runId) this.cursor = { runId: look.runId, token: undefined, seen: 0 };
    const cursor = this.cursor;
    for (;;) {
      let response: Awaited<ReturnType<Client['workflowService']['getWorkflowExecutionHistory']>>;
      try {
        response = await this.temporal.workflowService.getWorkflowExecutionHistory({
          namespace: this.temporal.options.namespace,
          execution: { workflowId: this.workflowId, runId: cursor.runId },
          maximumPageSize: HISTORY_PAGE,
          waitNewEvent: true,
          skipArchival: true,
          ...(cursor.token !== undefined && { nextPageToken: cursor.token }),
        });
      } catch {
        // A long poll cut short (a deadline, a server restarting): the reader looks at the run again.
        this.cursor = undefined;
        await new Promise((resolve) => setTimeout(resolve, WAIT_RETRY_MS));
        return;
      }
      const last = response.history?.events?.at(-1)?.eventId;
      if (last !== undefined && last !== null) cursor.seen = Math.max(cursor.seen, Number(last));
      const token = response.nextPageToken;
      cursor.token = token !== undefined && token !== null && token.length > 0 ? token : undefined;
      // Closed (no more pages), or something happened since the look.
      if (cursor.token === undefined || cursor.seen > look.historyLength) {
        if (cursor.token === undefined) this.cursor = undefined;
        return;
      }
    }
  }
}

/**
 * gRPC codes of a query that may be answered when asked again: CANCELLED, DEADLINE_EXCEEDED and
 * UNAVAILABLE, as when the worker it went to was killed mid-query or the server was too busy.
 */
const TRANSIENT_QUERY_CODES: ReadonlySet<unknown> = new Set([1, 4, 14]);
/** How long a reader keeps asking a run's log that does not answer before it gives up. */
const QUERY_PATIENCE_MS = 60_000;
/** Longest pause between two of those tries. */
const QUERY_RETRY_MAX_MS = 2_000;

/** The run's log from `from` on; a query that failed for a passing reason is asked again, for a while. */
async function readStream(temporal: Client, runId: string, from: number): Promise<StreamRead> {
  const since = Date.now();
  for (let pause = WAIT_RETRY_MS; ; pause = Math.min(QUERY_RETRY_MAX_MS, pause * 2)) {
    try {
      return await readStreamOnce(temporal, runId, from);
    } catch (error) {
      if (!transientQueryFailure(error) || Date.now() - since >= QUERY_PATIENCE_MS) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}

function transientQueryFailure(error: unknown): boolean {
  if (!(error instanceof ServiceError)) return false;
  return TRANSIENT_QUERY_CODES.has((error.cause as { code?: unknown } | undefined)?.code);
}

async function readStreamOnce(temporal: Client, runId: string, from: number): Promise<StreamRead> {
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
