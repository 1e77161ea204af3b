import { CancellationScope, CancelledFailure, isCancellation } from '@temporalio/workflow';

/**
 * Cancellation ends the run as Canceled, never as a `failed` result: once the run is cancelled, the
 * step's failure (a cancelled activity, or one that timed out on a hung worker that could not hear
 * the cancel) is reported as the cancellation it comes from.
 */
export function rethrowIfCancelled(error: unknown, onCancelled: () => void): void {
  const cancelled = isCancellation(error) || CancellationScope.current().consideredCancelled;
  if (!cancelled) return;
  onCancelled();
  if (isCancellation(error)) throw error;
  throw new CancelledFailure('The run was cancelled', [], error instanceof Error ? error : undefined);
}
