import { z } from 'zod';

/**
 * The signal a model turn's attempt after the first sends its run (for runs whose request asks with
 * `sayRetries`), so that the state query and the UI's current details say the turn is being tried
 * again while it is, not only once the retry answers.
 */
export const MODEL_ATTEMPT_SIGNAL = 'keel.modelAttempt';

/** Characters of a failed attempt's reason the run keeps. */
export const MODEL_ATTEMPT_REASON_CHARS = 300;

/** A model turn that Temporal is trying again: which attempt of how many, and why the last failed. */
export const ModelAttempt = z.strictObject({
  turn: z.number().int().positive(),
  /** This attempt's number: 2 or more. */
  attempt: z.number().int().min(2),
  /** The turn's most attempts, when the server said. */
  maxAttempts: z.number().int().positive().nullable(),
  /** Why the last attempt failed, as a person reads it: `had no answer within its timeout`, `failed: …`. */
  reason: z.string().max(MODEL_ATTEMPT_REASON_CHARS),
});
export type ModelAttempt = z.infer<typeof ModelAttempt>;
