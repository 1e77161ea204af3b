import type { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import { decode, decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { payloadsFromJson } from '../codec/proto-json.js';
import { ACTIVITY_NAMES, LEGACY_ACTIVITY_NAMES } from '../contract/activity-names.js';
import { LiveLine, LiveStream, PublishedEvent } from '../contract/stream-event.js';
import { LIVE_PING_MS } from './live-hub.js';

/** A live connection silent this long (three missed pings) is taken as lost: its worker is gone or cut off. */
const LIVE_IDLE_MS = 3 * LIVE_PING_MS;

/** An attempt runs on a worker. */
const STARTED = proto.temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

const MODEL_ACTIVITIES: ReadonlySet<string> = new Set([
  ACTIVITY_NAMES.callModel,
  LEGACY_ACTIVITY_NAMES.callModel,
]);

/** What a look at the run found: its model turn's live stream, if one runs, and its history's length. */
export interface RunLook {
  live: LiveStream | undefined;
  /** The model activity's attempt that has started and says nothing of a live stream (its worker streams none), if any. */
  startedWithoutLive: number | undefined;
  /** Whether a model turn's activity is scheduled or running: a turn is open, whatever an earlier read of the log said. */
  modelPending: boolean;
  historyLength: number;
  runId: string;
  running: boolean;
}

/**
 * Describes the run (its current execution): where the model turn `turn` streams live, from the
 * heartbeat details of its running `callModel` attempt, decoded with the client's data converter.
 */
export async function lookAtRun(
  temporal: Client,
  workflowId: string,
  turn: number | undefined,
): Promise<RunLook> {
  const description = await temporal.workflow.getHandle(workflowId).describe();
  let live: LiveStream | undefined;
  let startedWithoutLive: number | undefined;
  let modelPending = false;
  for (const pending of description.raw.pendingActivities ?? []) {
    if (!MODEL_ACTIVITIES.has(pending.activityType?.name ?? '')) continue;
    modelPending = true;
    const payloads = pending.heartbeatDetails?.payloads;
    const details = payloads?.length
      ? await decodeFromPayloadsAtIndex<{ live?: unknown }>(
          temporal.options.loadedDataConverter,
          0,
          payloads,
        ).catch(() => undefined)
      : undefined;
    const parsed = LiveStream.safeParse(details?.live);
    if (parsed.success && (turn === undefined || parsed.data.turn === turn)) live = parsed.data;
    else if (pending.state === STARTED) startedWithoutLive = pending.attempt ?? 1;
  }
  return {
    live,
    startedWithoutLive,
    modelPending,
    historyLength: description.historyLength,
    runId: description.runId,
    running: description.status.name === 'RUNNING',
  };
}

/** How a live read ended: the attempt completed or failed, or the connection ended without saying (it died). */
export type LiveEnd = 'completed' | 'failed' | 'lost';

/**
 * Reads a live attempt from event `from` on: each event as it comes, then how it ended. Encoded
 * events (the worker's codec is on) are decoded with the client's codecs.
 */
export async function* readLive(
  temporal: Client,
  stream: LiveStream,
  from: number,
  signal?: AbortSignal,
): AsyncGenerator<{ index: number; event: PublishedEvent }, LiveEnd, undefined> {
  const url = new URL(stream.url);
  if (from > 0) url.searchParams.set('from', String(from));
  const idle = new AbortController();
  let timer = setTimeout(() => idle.abort(), LIVE_IDLE_MS);
  const alive = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => idle.abort(), LIVE_IDLE_MS);
  };
  const aborted = signal === undefined ? idle.signal : AbortSignal.any([signal, idle.signal]);
  try {
    let response: Response;
    try {
      // The URL came from the run's heartbeat: it is followed, nothing it redirects to.
      response = await fetch(url, { signal: aborted, redirect: 'error' });
    } catch {
      if (signal?.aborted === true) throw signal.reason;
      return 'lost';
    }
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      return 'lost';
    }
    const codecs = temporal.options.loadedDataConverter.payloadCodecs;
    const parse = (text: string): LiveLine | undefined => {
      try {
        return LiveLine.parse(JSON.parse(text));
      } catch {
        return undefined;
      }
    };
    const decoder = new TextDecoder();
    let buffered = '';
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        alive();
        buffered += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const text = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          // An empty line keeps the connection alive.
          if (text === '') continue;
          const line = parse(text);
          // Not a live stream's line (something else answers at that address): no live text here.
          if (line === undefined) return 'lost';
          if ('done' in line) return line.done;
          if ('event' in line) {
            yield line;
          } else {
            const [payload] = await decode(codecs, payloadsFromJson({ payloads: [line.payload] }));
            const event = PublishedEvent.parse(defaultPayloadConverter.fromPayload(payload!));
            yield { index: line.index, event };
          }
        }
      }
    } catch (error) {
      if (signal?.aborted === true) throw error;
    }
  } finally {
    clearTimeout(timer);
    // A reader that stops early closes the connection.
    idle.abort();
  }
  return 'lost';
}
