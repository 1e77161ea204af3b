import {
  ApplicationFailure,
  ContinueAsNew,
  IllegalStateError,
  isCancellation,
  log,
  TemporalFailure,
  WorkflowError,
} from '@temporalio/workflow';
import type { FailureType } from '../contract/failure-type.js';

/** A run input (or argument) the workflow cannot use: the run fails at once, never retried. */
export function invalidInput(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'KeelError.InvalidInput' satisfies FailureType,
    message: `Invalid run input:\n${message}`,
    nonRetryable: true,
  });
}

/**
 * An update the run refuses (its validator threw this): nothing changed, and sending the same update
 * again would be refused again, so the caller must not retry it as it is.
 */
export function invalidUpdate(message: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'KeelError.InvalidUpdate' satisfies FailureType,
    message,
    nonRetryable: true,
  });
}

/**
 * What an error thrown inside the workflow becomes. Temporal fails the workflow task, and retries it
 * for ever, for anything that is not a `TemporalFailure`: a `TypeError` from a bad argument would
 * wedge the run, and not even a cancel could end it. So Keel's own bugs fail the run (or the update)
 * with `KeelError.Unexpected`, and the full error goes to the worker log. Left as they are: Temporal's
 * failures and cancellations, continue-as-new, and the SDK's own errors (a determinism violation or an
 * illegal state), which a fixed worker can resume from and which must stay visible as failing tasks.
 * (`failureExceptionTypes: [Error]` would do the first part but fail the run on those too.)
 */
export function asWorkflowFailure(error: unknown, where: string): unknown {
  if (
    error instanceof TemporalFailure ||
    error instanceof ContinueAsNew ||
    error instanceof WorkflowError ||
    error instanceof IllegalStateError ||
    isCancellation(error)
  ) {
    return error;
  }
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  log.error(`Unexpected error in ${where}`, {
    error: message,
    ...(error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {}),
  });
  return ApplicationFailure.create({
    type: 'KeelError.Unexpected' satisfies FailureType,
    message: `Keel's ${where} failed unexpectedly (${message}); the run cannot go on. The worker log has the details.`,
    nonRetryable: true,
  });
}
