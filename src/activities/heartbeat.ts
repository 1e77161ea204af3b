import { Context } from '@temporalio/activity';

/** Heartbeat interval when the activity has no heartbeat timeout (it then only matters for cancellation). */
const FALLBACK_INTERVAL_MS = 5_000;

/** Sends a heartbeat, optionally with new details (kept for the following beats). */
export type Beat = (details?: unknown) => void;

/**
 * Runs `work` while heartbeating on a timer, so Temporal sees the worker alive and can deliver a
 * cancellation, however long the work blocks. The timer always stops, whatever `work` does.
 *
 * With `waitForFirstBeat`, the timer stays silent until `work` beats itself: the first heartbeat goes
 * to the server at once while later ones are throttled, so work that must record details durably
 * (a response id) makes the first beat carry them.
 */
export async function withHeartbeats<T>(
  work: (beat: Beat) => Promise<T>,
  options: { waitForFirstBeat?: boolean } = {},
): Promise<T> {
  const context = Context.current();
  const timeout = context.info.heartbeatTimeoutMs;
  // Three beats per timeout: one lost beat never costs the attempt.
  const interval = timeout ? Math.max(200, Math.floor(timeout / 3)) : FALLBACK_INTERVAL_MS;
  let details: unknown;
  let started = false;
  const beat: Beat = (next) => {
    if (next !== undefined) details = next;
    started = true;
    context.heartbeat(details);
  };
  if (!options.waitForFirstBeat) beat();
  const timer = setInterval(() => {
    if (started) beat();
  }, interval);
  try {
    return await work(beat);
  } finally {
    clearInterval(timer);
  }
}
