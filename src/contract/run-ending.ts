import type { FailureType } from './failure-type.js';
import type { RunResult, RunStatus } from './run-result.js';

/** How a run that did not complete ends its Temporal execution: an application failure of this type and message. */
export interface RunEndingFailure {
  type: FailureType;
  message: string;
}

/**
 * The failure type a run that ended with each status fails its execution with: a `failed` run its
 * own `errorType`, a stopped one the Keel type named here. Only `completed` completes: the others did
 * not do the task, as the agent SDKs say by raising (OpenAI Agents' `MaxTurnsExceeded`, pydantic-ai's
 * `UsageLimitExceeded`).
 */
export const ENDING_FAILURE_TYPES = {
  failed: 'errorType',
  max_turns: 'KeelError.MaxTurnsExceeded',
  max_tokens: 'KeelError.MaxTokensExceeded',
  max_time: 'KeelError.MaxTimeExceeded',
  max_cost: 'KeelError.MaxCostExceeded',
  incomplete: 'KeelError.IncompleteOutput',
} as const satisfies Record<Exclude<RunStatus, 'completed'>, FailureType | 'errorType'>;

/**
 * How a run with this result ends in Temporal: `undefined` for `completed` (the execution completes
 * with the result); else the type and message of the non-retryable application failure it fails
 * with, whose `details[0]` is the result.
 */
export function runEndingFailure(result: RunResult): RunEndingFailure | undefined {
  switch (result.status) {
    case 'completed':
      return undefined;
    case 'failed':
      return { type: result.errorType, message: result.reason };
    case 'max_turns':
      return {
        type: ENDING_FAILURE_TYPES.max_turns,
        message: `The run stopped at its turn limit (maxTurns) after ${result.turns} model turns, before the model finished; the calls of its last turn were not run.`,
      };
    case 'max_tokens':
      return {
        type: ENDING_FAILURE_TYPES.max_tokens,
        message: `The run stopped at its token budget (maxTotalTokens) after ${result.usage.totalTokens} tokens, before the model finished.`,
      };
    case 'max_time':
      return {
        type: ENDING_FAILURE_TYPES.max_time,
        message: `The run stopped at its time budget (maxDurationSeconds) after ${result.turns} model turns, before the model finished.`,
      };
    case 'max_cost':
      return {
        type: ENDING_FAILURE_TYPES.max_cost,
        message: `The run stopped at its cost budget (maxCostUsd) at $${(result.costUsd ?? 0).toFixed(4)}, before the model finished.`,
      };
    case 'incomplete':
      return {
        type: ENDING_FAILURE_TYPES.incomplete,
        message: `The model's output was cut off (${result.reason}) before it finished its answer.`,
      };
  }
}
