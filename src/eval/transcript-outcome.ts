import { ApplicationFailure, CancelledFailure, TerminatedFailure } from '@temporalio/common';
import type { LoadedDataConverter, Payload, ProtoFailure } from '@temporalio/common';
import {
  decodeFromPayloadsAtIndex,
  decodeOptionalFailureToOptionalError,
} from '@temporalio/common/lib/internal-non-workflow/index.js';
import { runEndingFailure } from '../contract/run-ending.js';
import { RunResult } from '../contract/run-result.js';
import { runResultOfFailure } from '../contract/run-result-of-failure.js';
import type { TranscriptOutcome } from './recorded-run.js';

/** The event that ended the run's last execution, as read from its history. */
export type CloseEvent =
  | { kind: 'completed'; result: Payload[] | null | undefined }
  | { kind: 'failed'; failure: ProtoFailure | undefined }
  | { kind: 'cancelled' }
  | { kind: 'terminated'; reason: string }
  | { kind: 'timed_out' }
  | { kind: 'continued' };

/** How the run ended, and its result when the ending carries one (a completed run's, or a stopped one's). */
export interface RunEnding {
  outcome: TranscriptOutcome;
  result: RunResult | undefined;
}

/**
 * The outcome of a run whose last execution ended with `close` (`undefined`: it has not ended).
 * A run that did not complete carries its result as its failure's `details[0]` (see
 * `runEndingFailure`); any other failure (an invalid input, a bug) is `failed` with its type and
 * message. `lastText` is the last text a turn wrote, for endings without a result.
 */
export async function outcomeOfClose(
  close: CloseEvent | undefined,
  lastText: string,
  converter: LoadedDataConverter,
): Promise<RunEnding> {
  const without = (status: TranscriptOutcome['status'], reason?: string): RunEnding => ({
    outcome: { status, text: lastText, ...(reason !== undefined && reason !== '' ? { reason } : {}) },
    result: undefined,
  });
  switch (close?.kind) {
    case undefined:
      return without('running');
    case 'continued':
      return without('running', 'It continued as new, and the next execution was not found.');
    case 'cancelled':
      return without('cancelled', 'The run was cancelled.');
    case 'terminated':
      return without('terminated', close.reason || 'The run was terminated.');
    case 'timed_out':
      return without('timed_out', "The run's workflow execution timed out.");
    case 'completed': {
      const parsed = RunResult.safeParse(await decodeFromPayloadsAtIndex(converter, 0, close.result));
      if (!parsed.success) return without('completed');
      return endingOfResult(parsed.data, lastText);
    }
    case 'failed': {
      const error = await decodeOptionalFailureToOptionalError(converter, close.failure);
      if (error instanceof CancelledFailure) return without('cancelled', error.message);
      if (error instanceof TerminatedFailure) return without('terminated', error.message);
      const type = error instanceof ApplicationFailure ? (error.type ?? undefined) : undefined;
      const details = error instanceof ApplicationFailure ? error.details : undefined;
      const result = runResultOfFailure(type, details ?? undefined);
      if (result !== undefined) return endingOfResult(result, lastText);
      return {
        outcome: {
          status: 'failed',
          text: lastText,
          ...(type !== undefined ? { errorType: type } : {}),
          reason: error?.message ?? 'The run failed.',
        },
        result: undefined,
      };
    }
  }
}

/** The outcome a run's own result says (a failed one has no text of its own: the last turn's is taken). */
function endingOfResult(result: RunResult, lastText: string): RunEnding {
  const reason = runEndingFailure(result)?.message;
  const text =
    result.status === 'completed'
      ? result.finalText
      : result.status === 'incomplete'
        ? result.partialText
        : result.status === 'failed'
          ? lastText
          : result.lastText;
  return {
    outcome: {
      status: result.status,
      text,
      ...(result.status === 'failed' ? { errorType: result.errorType } : {}),
      ...(reason !== undefined ? { reason } : {}),
    },
    result,
  };
}
