import { ApplicationFailure, patched } from '@temporalio/workflow';
import { runEndingFailure } from '../contract/run-ending.js';
import type { RunResult } from '../contract/run-result.js';
import { finish } from './publish.js';
import type { RunContext } from './run-context.js';
import type { Ending } from './steps.js';

/**
 * Marks the executions whose ending is their Temporal status: a run that did not complete fails.
 * Histories from before it replay as they ran, completing with every result.
 */
export const ENDINGS_FAIL_PATCH = 'keel-unfinished-runs-fail';

/**
 * Ends the run with `ending`: the result in the state, the search attributes and the UI first, then
 * the execution's own status. A `completed` result completes it; any other fails it with a
 * non-retryable application failure (type and message from `runEndingFailure`, `details[0]` the
 * result), so the Temporal UI, its failure counters and `ExecutionStatus` queries tell the truth.
 */
export function endRun(run: RunContext, ending: Ending): RunResult {
  const result = finish(run, ending);
  const failure = runEndingFailure(result);
  if (failure === undefined || !patched(ENDINGS_FAIL_PATCH)) return result;
  throw ApplicationFailure.create({
    type: failure.type,
    message: failure.message,
    nonRetryable: true,
    details: [result],
  });
}
