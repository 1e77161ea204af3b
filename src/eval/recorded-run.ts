import { z } from 'zod';
import { CASE_ENDING_STATUSES } from '../contract/eval-input.js';
import { RecordedAnswer } from '../contract/replay.js';
import { Usage } from '../contract/usage.js';

/** One tool call of a run, with what its tool answered (absent when the run ended before an answer). */
export const TranscriptCall = z.object({
  callId: z.string(),
  name: z.string(),
  argumentsJson: z.string(),
  answer: RecordedAnswer.optional(),
});
export type TranscriptCall = z.infer<typeof TranscriptCall>;

/** One model turn of a run, and the calls it asked for, in the order the model emitted them. */
export const TranscriptTurn = z.object({
  turn: z.number().int().positive(),
  responseId: z.string().nullable(),
  model: z.string(),
  text: z.string(),
  usage: Usage,
  calls: z.array(TranscriptCall),
});
export type TranscriptTurn = z.infer<typeof TranscriptTurn>;

/**
 * How the run ended, or that it has not: a {@link RunResult} status, `cancelled`, `terminated`,
 * `timed_out` (by Temporal's own timeout), or `running`.
 */
export const TranscriptOutcome = z.object({
  status: z.enum([...CASE_ENDING_STATUSES, 'terminated', 'timed_out', 'running']),
  /** The final text of a completed run; the last, partial text otherwise ('' when there is none). */
  text: z.string(),
  /** The dotted failure type of a failed run, e.g. `KeelError.Diverged`. */
  errorType: z.string().optional(),
  /** Why it did not complete, in words. */
  reason: z.string().optional(),
});
export type TranscriptOutcome = z.infer<typeof TranscriptOutcome>;

/**
 * What a run did, read from its workflow history (every execution, across continue-as-new): the
 * input it started with, each model turn with its calls and their answers, and how it ended. The
 * recorded side and the candidate side of an eval case are both transcripts.
 */
export const RunTranscript = z.object({
  runId: z.string(),
  /** The run input exactly as the first execution got it (a recorded run's candidate starts from it). */
  input: z.record(z.string(), z.unknown()),
  task: z.string(),
  turns: z.array(TranscriptTurn),
  outcome: TranscriptOutcome,
  usage: Usage,
  /** From the run's result, when the worker had a price for its model. */
  costUsd: z.number().nonnegative().optional(),
});
export type RunTranscript = z.infer<typeof RunTranscript>;
