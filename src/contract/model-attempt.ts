import { z } from 'zod';
import { MODEL_ATTEMPT_REASON_CHARS } from './defaults.js';

export { MODEL_ATTEMPT_REASON_CHARS, MODEL_ATTEMPT_SIGNAL } from './defaults.js';

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
