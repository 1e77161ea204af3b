import { Context } from '@temporalio/activity';

/**
 * Longest gap between two local heartbeats. The SDK forwards them to the server at most every
 * `maxHeartbeatThrottleInterval` (see the worker), so beating more often costs nothing extra.
 */
const MAX_INTERVAL_MS = 1_000;

/** Sends a heartbeat, optionally with new details (kept for the following beats). */
export type Beat = (details?: unknown) => void;

/**
 * Runs `work` while heartbeating on a timer, so Temporal sees the worker alive and can deliver a
 * cancellation, however long the work blocks. The first timer beat comes one interval after the
 * start, so work that ends sooner costs no heartbeat at all. The timer always stops, whatever `work`
 * does.
 *
 * Details passed to `beat` ride on every later beat. The SDK sends the first heartbeat of an attempt
 * at once and throttles the rest, so details recorded before the first timer beat (a response id
 * from a quick create) are durable at once, and later ones within one throttle interval.
 */
export async function withHeartbeats<T>(work: (beat: Beat) => Promise<T>): Promise<T> {
  const context = Context.current();
  const timeout = context.info.heartbeatTimeoutMs;
  // At least three beats per timeout, so one lost beat never costs the attempt.
  const interval = Math.min(
    MAX_INTERVAL_MS,
    timeout ? Math.max(100, Math.floor(timeout / 3)) : MAX_INTERVAL_MS,
  );
  let details: unknown;
  const beat: Beat = (next) => {
    if (next !== undefined) details = next;
    context.heartbeat(details);
  };
  // No beat at the very start: Temporal counts the heartbeat timeout from the start anyway, and an
  // immediate beat is a server call on every activity's critical path (about 2 ms of a 40 ms step).
  const timer = setInterval(() => beat(), interval);
  try {
    return await work(beat);
  } finally {
    clearInterval(timer);
  }
}
