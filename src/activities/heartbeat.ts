import { Context } from '@temporalio/activity';

/** Heartbeat interval when the activity has no heartbeat timeout (it then only matters for cancellation). */
const FALLBACK_INTERVAL_MS = 5_000;

/**
 * Runs `work` while heartbeating on a timer, so Temporal sees the worker alive and can deliver a
 * cancellation, however long the work blocks. The timer always stops, whatever `work` does.
 */
export async function withHeartbeats<T>(
  work: (heartbeat: (details?: unknown) => void) => Promise<T>,
): Promise<T> {
  const context = Context.current();
  const timeout = context.info.heartbeatTimeoutMs;
  // Three beats per timeout: one lost beat never costs the attempt.
  const interval = timeout ? Math.max(200, Math.floor(timeout / 3)) : FALLBACK_INTERVAL_MS;
  let details: unknown;
  const beat = (next?: unknown): void => {
    if (next !== undefined) details = next;
    context.heartbeat(details);
  };
  beat();
  const timer = setInterval(beat, interval);
  try {
    return await work(beat);
  } finally {
    clearInterval(timer);
  }
}
