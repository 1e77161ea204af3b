import { z } from 'zod';
import { FailureType } from './failure-type.js';
import { RunInput } from './run-input.js';
import { distinctCaseIds } from './rules.js';
import { withRule } from './value-check-plan.js';

/** Most eval cases running at once, unless the eval says otherwise. */
export const DEFAULT_EVAL_CONCURRENCY = 4;

/** One case of an eval: the candidate run to start, under an id unique within the eval. */
export const EvalCaseInput = z.strictObject({
  caseId: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'must be 1–100 letters, digits, dots, dashes or underscores'),
  /** The candidate's run input: the recorded task under the candidate's settings, with `replay`. */
  input: RunInput,
  /** The recorded run the case replays, when it came from the cluster: a follower reads it again. */
  recordedRunId: z.string().min(1).max(1000).optional(),
});
export type EvalCaseInput = z.infer<typeof EvalCaseInput>;

/** The input of the `evalRun` workflow: its cases, each a child `agentRun`, a bounded few at a time. */
export const EvalRunInput = withRule(
  z.strictObject({
    cases: z.array(EvalCaseInput).min(1).max(10_000),
    concurrency: z.number().int().min(1).max(64).default(DEFAULT_EVAL_CONCURRENCY),
  }),
  'distinctCaseIds',
  distinctCaseIds,
);
export type EvalRunInputArgs = z.input<typeof EvalRunInput>;
export type EvalRunInput = z.output<typeof EvalRunInput>;

/** How a run Keel started can end: a {@link RunResult} status, or cancelled. */
export const CASE_ENDING_STATUSES = [
  'completed',
  'max_turns',
  'max_tokens',
  'max_time',
  'max_cost',
  'incomplete',
  'failed',
  'cancelled',
] as const;

/** How one case's candidate run ended, as the eval workflow saw its child end. */
export const EvalCaseEnding = z.strictObject({
  caseId: z.string(),
  /** The child run's workflow id: read its history for the candidate's transcript. */
  runId: z.string(),
  status: z.enum(CASE_ENDING_STATUSES),
  errorType: FailureType.optional(),
});
export type EvalCaseEnding = z.infer<typeof EvalCaseEnding>;

/** What `evalRun` returns: one ending per case, in the input's order. */
export const EvalRunResult = z.strictObject({ cases: z.array(EvalCaseEnding) });
export type EvalRunResult = z.infer<typeof EvalRunResult>;

/** What `evalRun`'s state query answers while it runs. */
export const EvalRunState = z.strictObject({
  total: z.number().int().nonnegative(),
  running: z.array(z.string()),
  ended: z.array(EvalCaseEnding),
});
export type EvalRunState = z.infer<typeof EvalRunState>;
