import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import type { Ending } from './steps.js';

/** Turns an activity's final failure into a `failed` ending with a readable reason. */
export function stepFailure(step: string, error: unknown): Ending {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    return { status: 'failed', reason: cause.message, errorType: cause.type ?? 'ApplicationFailure' };
  }
  if (cause instanceof TimeoutFailure) {
    return {
      status: 'failed',
      reason: `The ${step} timed out (${cause.timeoutType}) on every attempt`,
      errorType: 'KeelError.Timeout',
    };
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return { status: 'failed', reason: `The ${step} failed: ${message}`, errorType: 'KeelError.Unexpected' };
}
