import { z } from 'zod';

/** Token usage of one model turn or of a whole run. */
export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  cachedInputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  reasoningTokens: z.number().int().nonnegative(),
  totalTokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;

export { addUsage, emptyUsage, usageCost } from './usage-sums.js';

/** A model's price in US dollars per million tokens. Cached input costs `cachedInput` (else `input`). */
export const ModelPrice = z.strictObject({
  input: z.number().nonnegative(),
  cachedInput: z.number().nonnegative().optional(),
  output: z.number().nonnegative(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;
