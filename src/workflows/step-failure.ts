import { ActivityFailure, ApplicationFailure, TimeoutFailure } from '@temporalio/workflow';
import { toFailureType, UNKNOWN_FAILURE_TYPE } from '../contract/failure-type-names.js';
import type { Ending } from './steps.js';

/** Turns an activity's final failure into a `failed` ending with a readable reason and a closed failure type. */
export function stepFailure(step: string, error: unknown): Ending {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) {
    const errorType = toFailureType(cause.type);
    // A type of a tool's or plugin's own stays readable in the reason; `errorType` stays closed.
    const reason =
      errorType === UNKNOWN_FAILURE_TYPE
        ? `The ${step} failed: ${cause.message} (failure type ${cause.type ?? 'none'})`
        : cause.message;
    return { status: 'failed', reason, errorType };
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
