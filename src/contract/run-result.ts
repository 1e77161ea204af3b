import { z } from 'zod';
import { FailureType } from './failure-type.js';
import { Usage } from './usage.js';

const common = {
  /** Model turns taken. */
  turns: z.number().int().nonnegative(),
  /** Tool calls executed (or answered with an observation). */
  toolCalls: z.number().int().nonnegative(),
  usage: Usage,
  /** Id of the last Responses API response: chain from it to continue the conversation. */
  lastResponseId: z.string().nullable(),
  model: z.string(),
  /** What the run cost in US dollars, from the worker's price table; absent when the model has no price. */
  costUsd: z.number().nonnegative().optional(),
};

/**
 * How a run ended. A `completed` run completes in Temporal with this result; any other ending fails
 * the execution with the result as its failure's details (see `runEndingFailure`); a cancelled run
 * has no result and ends as Canceled.
 */
export const RunResult = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('completed'),
    finalText: z.string(),
    /** The final answer as the value it holds, checked against the run's output schema (`output`); only for a run that declared one. */
    output: z.unknown().optional(),
    ...common,
  }),
  z.object({ status: z.literal('max_turns'), lastText: z.string(), ...common }),
  /** The token budget (`maxTotalTokens`) was spent. */
  z.object({ status: z.literal('max_tokens'), lastText: z.string(), ...common }),
  /** The wall-clock budget (`maxDurationSeconds`) ran out. */
  z.object({ status: z.literal('max_time'), lastText: z.string(), ...common }),
  /** The cost budget (`maxCostUsd`) was spent. */
  z.object({ status: z.literal('max_cost'), lastText: z.string(), ...common }),
  z.object({
    status: z.literal('incomplete'),
    /** Why the model's output was cut off, e.g. `max_output_tokens` or `content_filter`. */
    reason: z.string(),
    partialText: z.string(),
    ...common,
  }),
  z.object({
    status: z.literal('failed'),
    /** A readable sentence for people: what went wrong and what to do. */
    reason: z.string(),
    /** Dotted failure type, e.g. `ModelError.Authentication`: one of the closed {@link FailureType}. */
    errorType: FailureType,
    ...common,
  }),
]);
export type RunResult = z.infer<typeof RunResult>;
export type RunStatus = RunResult['status'];
